/**
 * @module Subscriptions from the command line (docs/subscriptions.md), in mqadmin's style: `updateSubscription`
 * (create or replace a group's subscription to a Lambda function or an HTTPS URL), `subscriptionList` and
 * `deleteSubscription`. An HTTPS target's secret comes from `--secret` or NIMBUS_WEBHOOK_SECRET.
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import { ErrorCode, NimbusError } from "../core/errors.js";
import {
  endpoints,
  type SubscriptionDefinition,
  SubscriptionDefinitionSchema,
  type SubscriptionInfo,
} from "../protocol/index.js";
import { type ApiOptions, apiCommand, connect } from "./common.js";
import { formatTable, note, print, printJson } from "./output.js";

interface UpdateOptions extends ApiOptions {
  groupName: string;
  topic: string;
  url?: string;
  secret?: string;
  functionArn?: string;
  subExpression: string;
  sql?: string;
  batchSize?: number;
  batchingWindow?: number;
  maxConcurrency?: number;
  ordering?: "none" | "queue" | "messageGroup";
  maxReconsumeTimes?: number;
  timeout?: number;
  enableMsgTrace?: boolean;
  customizedTraceTopic?: string;
}

const integer = (value: string): number => {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError("expected a non-negative integer");
  return Number(value);
};

export function addSubscriptionCommands(program: Command): void {
  apiCommand(
    program,
    "updateSubscription",
    "create or replace a group's subscription (a Lambda function or an HTTPS URL)",
  )
    .requiredOption("-g, --groupName <group>", "consumer group")
    .requiredOption("-t, --topic <topic>", "topic")
    .option("-u, --url <url>", "HTTPS target (http:// only to a loopback host)")
    .addOption(new Option("--secret <secret>", "the HTTPS target's signing secret").env("NIMBUS_WEBHOOK_SECRET"))
    .option("--functionArn <arn>", "Lambda target")
    // The letters mean what they mean in the rest of the CLI (mqadmin's): -s the tag filter as in consume; -b, -c,
    // -w and -f (broker, cluster, write queues, force) are not reused here (docs/cli.md "One vocabulary").
    .option("-s, --subExpression <tags>", "tag filter (TagA || TagB)", "*")
    .option("--sql <expression>", "SQL92 filter over the message's properties")
    .option("--batchSize <n>", "messages per delivery, 1..32", integer)
    .option("--batchingWindow <ms>", "wait up to this long to fill a batch", integer)
    .option("--maxConcurrency <n>", "deliveries in flight at once", integer)
    .addOption(new Option("-o, --ordering <ordering>", "delivery order").choices(["none", "queue", "messageGroup"]))
    .option("-r, --maxReconsumeTimes <n>", "redeliveries before the dead-letter queue", integer)
    .option("--timeout <ms>", "one delivery's timeout", integer)
    .option("--enableMsgTrace", "trace every delivery (SubBefore / SubAfter records, docs/trace.md)")
    .option("--customizedTraceTopic <topic>", "the trace records' topic (default RMQ_SYS_TRACE_TOPIC)")
    .action(updateSubscription);

  apiCommand(program, "subscriptionList", "every subscription, or those of one topic")
    .option("-t, --topic <topic>", "only this topic's")
    .action(subscriptionList);

  apiCommand(program, "deleteSubscription", "end a group's subscription")
    .requiredOption("-g, --groupName <group>", "consumer group")
    .action(deleteSubscription);
}

/** The request body the options describe (exactly one target). */
export function definitionOf(opts: UpdateOptions): Record<string, unknown> {
  if ((opts.url === undefined) === (opts.functionArn === undefined))
    throw new InvalidArgumentError("give exactly one target: --url or --functionArn");
  if (opts.url !== undefined && opts.secret === undefined)
    throw new InvalidArgumentError("an HTTPS target needs --secret (or NIMBUS_WEBHOOK_SECRET)");
  const target =
    opts.url !== undefined
      ? { type: "http", url: opts.url, secret: opts.secret }
      : { type: "lambda", functionArn: opts.functionArn };
  const optional: [keyof SubscriptionDefinition, unknown][] = [
    ["batchSize", opts.batchSize],
    ["maxBatchingWindowMs", opts.batchingWindow],
    ["maxConcurrency", opts.maxConcurrency],
    ["ordering", opts.ordering],
    ["maxReconsumeTimes", opts.maxReconsumeTimes],
    ["timeoutMs", opts.timeout],
    ["enableMsgTrace", opts.enableMsgTrace],
    ["customizedTraceTopic", opts.customizedTraceTopic],
  ];
  return {
    topic: opts.topic,
    filterExpression:
      opts.sql !== undefined
        ? { type: "SQL92", expression: opts.sql }
        : { type: "TAG", expression: opts.subExpression },
    target,
    ...Object.fromEntries(optional.filter(([, v]) => v !== undefined)),
  };
}

async function updateSubscription(opts: UpdateOptions): Promise<void> {
  // The defaults filled in here (the SDK encodes complete bodies); a bad one is refused with the schema's reasons.
  const parsed = SubscriptionDefinitionSchema.safeParse(definitionOf(opts));
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, reasons.slice(0, 1000));
  }
  const body = parsed.data;
  const info = await connect(opts).call(endpoints.updateSubscription, { params: { group: opts.groupName }, body });
  if (opts.json) return printJson(info);
  printTable([info]);
  note(`subscription of ${info.group} to ${info.topic} saved`);
}

async function subscriptionList(opts: ApiOptions & { topic?: string }): Promise<void> {
  const query = opts.topic === undefined ? {} : { topic: opts.topic };
  const { subscriptions } = await connect(opts).call(endpoints.listSubscriptions, { query });
  if (opts.json) return printJson({ subscriptions });
  printTable(subscriptions, true);
}

async function deleteSubscription(opts: ApiOptions & { groupName: string }): Promise<void> {
  await connect(opts).call(endpoints.deleteSubscription, { params: { group: opts.groupName } });
  if (opts.json) return printJson({ group: opts.groupName, deleted: true });
  note(`subscription of ${opts.groupName} deleted`);
}

/** A last delivery error as a table cell: when (UTC) and why, cut to fit a terminal; "-" when none failed. */
const lastErrorCell = (s: SubscriptionInfo): string =>
  s.lastDeliveryError === undefined
    ? "-"
    : `${new Date(s.lastDeliveryError.at).toISOString().slice(0, 19)}Z ${s.lastDeliveryError.reason.slice(0, 80)}`;

/** The subscriptions as a table; the list adds each one's last delivery error (`--json` has it whole). */
function printTable(rows: readonly SubscriptionInfo[], withLastError = false): void {
  print(
    formatTable(
      [
        { header: "Group" },
        { header: "Topic" },
        { header: "Filter" },
        { header: "Target" },
        { header: "Batch", align: "right" },
        { header: "Concurrency", align: "right" },
        { header: "Ordering" },
        { header: "Max Reconsume", align: "right" },
        { header: "Trace" },
        ...(withLastError ? [{ header: "Last Delivery Error" }] : []),
      ],
      rows.map((s) => [
        s.group,
        s.topic,
        `${s.filterExpression.type} ${s.filterExpression.expression}`,
        s.target.type === "http" ? s.target.url : s.target.functionArn,
        s.batchSize,
        s.maxConcurrency,
        s.ordering,
        s.maxReconsumeTimes,
        s.enableMsgTrace ? (s.customizedTraceTopic ?? "RMQ_SYS_TRACE_TOPIC") : "off",
        ...(withLastError ? [lastErrorCell(s)] : []),
      ]),
    ),
  );
}
