/**
 * @module mqadmin's habits on `nimbus` commands. An option mqadmin has for a command but Nimbus has no use for
 * is refused with the Nimbus way (a usage error, exit 2) instead of commander's bare `unknown option`; mqadmin's
 * `-c <clusterName>` is accepted where a command's scope can be a cluster, and checked against the live
 * clusters; `-b <brokerAddr>` resolves an address to its broker's name. Table of every mqadmin command and
 * Nimbus's answer: docs/cli.md.
 */
import { type Command, Option } from "commander";
import type { NimbusApi } from "../client/transport/index.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import type { ClusterInfo } from "../protocol/index.js";
import { type ApiOptions, connect, usage } from "./common.js";

/** An mqadmin option Nimbus refuses: its flags as mqadmin spells them and what to do in Nimbus instead. */
export interface RefusedOption {
  flags: string;
  hint: string;
}

/** The hint of mqadmin's `-b <brokerAddr>` on commands whose state is stage-wide in Nimbus. */
export const STAGE_WIDE_BROKER = "in Nimbus this is stage-wide, not per broker: drop -b (or give -c <cluster>)";

/**
 * Adds mqadmin's options `refused` to `cmd`, hidden from its help; giving one stops the command before it
 * runs with `-x (mqadmin's <name>) is not used by Nimbus: <hint>`.
 */
export function refuseOptions(cmd: Command, refused: readonly RefusedOption[]): Command {
  const options = refused.map(({ flags, hint }) => ({ option: new Option(flags).hideHelp(), hint }));
  for (const { option } of options) cmd.addOption(option);
  return cmd.hook("preAction", (_self, action) => {
    for (const { option, hint } of options) {
      if (action.getOptionValue(option.attributeName()) === undefined) continue;
      usage(
        action,
        `${option.short ?? option.long} (mqadmin's ${option.attributeName()}) is not used by Nimbus: ${hint}`,
      );
    }
  });
}

/**
 * Adds mqadmin's `-c, --clusterName <cluster>`: `what` says what it scopes. Before the command runs, an
 * unknown cluster (no live broker) is refused with PARAMETER_ILLEGAL and the live clusters named.
 */
export function clusterOption(cmd: Command, what: string): Command {
  return cmd
    .option("-c, --clusterName <cluster>", `mqadmin's cluster: ${what}`)
    .hook("preAction", async (_self, action) => {
      const opts = action.opts<ApiOptions & { clusterName?: string }>();
      if (opts.clusterName !== undefined) await clusterBrokers(connect(opts), opts.clusterName);
    });
}

/** The names of the live brokers of `cluster`, sorted; PARAMETER_ILLEGAL naming the live ones if it has none. */
export async function clusterBrokers(api: NimbusApi, cluster: string, info?: ClusterInfo): Promise<string[]> {
  const known = info ?? (await api.clusterInfo());
  const members = known.clusterAddrTable[cluster];
  if (members === undefined || members.length === 0) {
    const live = Object.keys(known.clusterAddrTable).sort().join(", ") || "none";
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `cluster ${cluster} has no live broker (live clusters: ${live})`,
    );
  }
  return [...members].sort();
}

/**
 * Brokers' names from mqadmin's `-b`: a broker name as it is, or a broker's address (`127.0.0.1:10911`, a URL)
 * as the names of the brokers served there (one process serves every broker in `nimbus dev`); an address no
 * live broker has is PARAMETER_ILLEGAL.
 */
export function brokerNamesOf(info: ClusterInfo, nameOrAddress: string): string[] {
  if (info.brokerAddrTable[nameOrAddress] !== undefined || !/[:/]/.test(nameOrAddress)) return [nameOrAddress];
  const bare = (a: string) => a.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/\/+$/, "");
  const names = Object.entries(info.brokerAddrTable)
    .filter(([, broker]) => Object.values(broker.brokerAddrs).some((a) => bare(a) === bare(nameOrAddress)))
    .map(([name]) => name)
    .sort();
  if (names.length > 0) return names;
  throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `no live broker at ${nameOrAddress} (see nimbus clusterList)`);
}

/** One mqadmin command Nimbus does not have, and what to do instead. */
export interface MissingCommand {
  name: string;
  hint: string;
}

/**
 * Registers mqadmin's commands Nimbus does not have (hidden from `--help`): each takes any options and stops
 * with `<name> is mqadmin's; Nimbus has no such command: <hint>` (exit 2), not `unknown command`.
 */
export function addMissingCommands(program: Command, missing: readonly MissingCommand[]): void {
  for (const { name, hint } of missing) {
    const cmd = program
      .command(name, { hidden: true })
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .action(() => usage(cmd, `${name} is mqadmin's; Nimbus has no such command: ${hint}`));
  }
}
