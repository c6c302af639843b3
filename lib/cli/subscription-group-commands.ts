/**
 * @module mqadmin's subscription group commands: `updateSubGroup` (create or replace a group's
 * SubscriptionGroupConfig, with mqadmin's option letters and its defaults: a setting not given takes
 * SubscriptionGroupConfig's default, except consumeBroadcastEnable, which mqadmin sets false unless `-d true`)
 * and `deleteSubGroup`. Subscription groups are stage-wide in Nimbus: `-c` is checked, `-b` refused.
 */
import { type Command, InvalidArgumentError } from "commander";
import type { SubscriptionGroupConfig, SubscriptionGroupSettings } from "../protocol/index.js";
import { type ApiOptions, apiCommand, connect } from "./common.js";
import { clusterOption, refuseOptions, STAGE_WIDE_BROKER } from "./mqadmin-compat.js";
import { print, printJson } from "./output.js";

interface UpdateOptions extends ApiOptions {
  groupName: string;
  clusterName?: string;
  consumeEnable?: boolean;
  consumeBroadcastEnable?: boolean;
  retryMaxTimes?: number;
  consumeMessageOrderly?: boolean;
}

interface DeleteOptions extends ApiOptions {
  groupName: string;
  clusterName?: string;
}

/** mqadmin's `true`/`false` option values (stricter than its Boolean.parseBoolean: a typo is refused). */
export function parseFlag(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new InvalidArgumentError("expected true or false");
}

function parseRetryMaxTimes(value: string): number {
  const n = Number(value);
  if (!/^\d{1,4}$/.test(value) || n > 1000) throw new InvalidArgumentError("expected an integer 0..1000");
  return n;
}

const NOT_KEPT = (what: string) => `Nimbus has no ${what}; the settings it honours are -s, -d, -r and -o`;

export function addSubscriptionGroupCommands(program: Command): void {
  const update = apiCommand(program, "updateSubGroup", "create or replace a consumer group's subscription group config")
    .requiredOption("-g, --groupName <group>", "consumer group")
    .option("-s, --consumeEnable <bool>", "false: the group's pulls and receives are refused (default true)", parseFlag)
    .option(
      "-d, --consumeBroadcastEnable <bool>",
      "true: BROADCASTING consumers may join (mqadmin's default here: false)",
      parseFlag,
    )
    .option("-r, --retryMaxTimes <n>", "reconsumes before the dead-letter queue (default 16)", parseRetryMaxTimes)
    .option(
      "-o, --consumeMessageOrderly <bool>",
      "true: POP receives of the group are FIFO (default false)",
      parseFlag,
    );
  refuseOptions(clusterOption(update, "checked; subscription groups are stage-wide"), [
    { flags: "-b, --brokerAddr <addr>", hint: STAGE_WIDE_BROKER },
    { flags: "-m, --consumeFromMinEnable <bool>", hint: NOT_KEPT("per-group start position (clients choose it)") },
    { flags: "-q, --retryQueueNums <n>", hint: NOT_KEPT("retry queue count (one retry queue per broker)") },
    { flags: "-i, --brokerId <id>", hint: NOT_KEPT("read-from-slave choice per group") },
    { flags: "-w, --whichBrokerWhenConsumeSlowly <id>", hint: NOT_KEPT("read-from-slave choice per group") },
    { flags: "-a, --notifyConsumerIdsChanged <bool>", hint: NOT_KEPT("switch: members always hear of changes") },
    { flags: "-p, --groupRetryPolicy <json>", hint: NOT_KEPT("retry policy but the delay levels") },
  ]).action(updateSubGroup);

  refuseOptions(
    clusterOption(
      apiCommand(program, "deleteSubGroup", "delete a consumer group's subscription group config").requiredOption(
        "-g, --groupName <group>",
        "consumer group",
      ),
      "checked; subscription groups are stage-wide",
    ),
    [
      { flags: "-b, --brokerAddr <addr>", hint: STAGE_WIDE_BROKER },
      {
        flags: "-r, --removeOffset <bool>",
        hint: "a group's offsets stay (a group created again resumes there); move them with resetOffsetByTime",
      },
    ],
  ).action(deleteSubGroup);
}

async function updateSubGroup(opts: UpdateOptions): Promise<void> {
  const settings: Partial<SubscriptionGroupSettings> = {
    // As mqadmin's UpdateSubGroupSubCommand: broadcast off unless -d says otherwise.
    consumeBroadcastEnable: opts.consumeBroadcastEnable ?? false,
    ...(opts.consumeEnable === undefined ? {} : { consumeEnable: opts.consumeEnable }),
    ...(opts.retryMaxTimes === undefined ? {} : { retryMaxTimes: opts.retryMaxTimes }),
    ...(opts.consumeMessageOrderly === undefined ? {} : { consumeMessageOrderly: opts.consumeMessageOrderly }),
  };
  const config = await connect(opts).updateSubGroup(opts.groupName, settings);
  if (opts.json) return printJson(config);
  print(`create subscription group to ${opts.clusterName ?? "the stage"} success.\n${describe(config)}\n`);
}

async function deleteSubGroup(opts: DeleteOptions): Promise<void> {
  await connect(opts).deleteSubGroup(opts.groupName);
  if (opts.json) return printJson({ group: opts.groupName, deleted: true });
  print(`delete subscription group [${opts.groupName}] from ${opts.clusterName ?? "the stage"} success.\n`);
}

/** The config as RocketMQ's SubscriptionGroupConfig.toString prints it. */
function describe(c: SubscriptionGroupConfig): string {
  return (
    `SubscriptionGroupConfig [groupName=${c.groupName}, consumeEnable=${c.consumeEnable}, ` +
    `consumeBroadcastEnable=${c.consumeBroadcastEnable}, retryMaxTimes=${c.retryMaxTimes}, ` +
    `consumeMessageOrderly=${c.consumeMessageOrderly}]`
  );
}
