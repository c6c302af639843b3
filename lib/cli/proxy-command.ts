/**
 * @module `nimbus proxy`: RocketMQ 5's gRPC endpoint alone (docs/grpc.md) on a stage's storage, the embedded
 * store or DynamoDB/S3 (`--storage aws ...`, as `nimbus dev` takes it), in the clear or with TLS
 * (`--tls-cert`, `--tls-key`: PEM files). With `--dispatch-function` (the stage's Dispatch Lambda, as
 * infra/grpc.ts sets NIMBUS_DISPATCH_FUNCTION) a send to a subscribed topic wakes it, as a send over HTTP does.
 */
import { readFileSync } from "node:fs";
import { type Command, InvalidArgumentError, Option } from "commander";
import type { StorageChoice } from "../dev/local-server.js";
import { workerBus } from "../dev/process-bus.js";
import { serverOptions } from "./dev-command.js";
import {
  authFromEnv,
  type DevOptions,
  describe,
  localAuth,
  stageConfig,
  stopOnSignals,
  storageChoice,
} from "./dev-servers.js";
import { announceWorker, defaultWorkers, isPrimaryOf, parseWorkers, superviseWorkers, workerIndex } from "./workers.js";

interface ProxyOptions extends DevOptions {
  tables?: string;
  tlsCert?: string;
  tlsKey?: string;
  advertisedHost?: string;
  dispatchFunction?: string;
  tlsOffloaded?: boolean;
  remotingPort?: number;
}

function pem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new InvalidArgumentError(`cannot read the ${what} ${path}: ${(err as Error).message}`);
  }
}

/** `--tables` (a stage's `NIMBUS_TABLES`, as its functions get it) over the prefix-made table names. */
function withTables(choice: StorageChoice, json: string | undefined): StorageChoice {
  if (json === undefined || choice.kind !== "aws") return choice;
  let names: unknown;
  try {
    names = JSON.parse(json);
  } catch {
    throw new InvalidArgumentError("--tables is a JSON object of table names");
  }
  const valid =
    typeof names === "object" && names !== null && Object.values(names).every((v) => typeof v === "string" && v !== "");
  if (!valid) throw new InvalidArgumentError("--tables is a JSON object of table names");
  return { ...choice, tableNames: names as Record<string, string> };
}

function remotingPort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("a port is 0..65535");
  return n;
}

/** What the banner says of the remoting door (lib/remoting's RemotingDoor). */
interface RemotingAddresses {
  readonly brokerNames: readonly string[];
  readonly nameServerAddress: string;
  addressOf(brokerName: string, brokerId: number, registered: string): string;
}

/** The banner's remoting line: the name server's address, then each broker's. */
function remotingLines(door: RemotingAddresses | undefined): string[] {
  if (door === undefined) return [];
  const brokers = door.brokerNames.map((name) => `${name} ${door.addressOf(name, 0, "")}`);
  return [`nimbus: RocketMQ 4.x remoting: name server ${door.nameServerAddress} (brokers: ${brokers.join(", ")})`];
}

export function addProxyCommand(program: Command): void {
  serverOptions(
    program
      .command("proxy")
      .description("serve RocketMQ 5's gRPC protocol (apache.rocketmq.v2.MessagingService) on a stage's storage"),
    8081,
  )
    .option("--advertised-host <name>", "the host name clients are told to call, e.g. a load balancer's")
    .option(
      "--tls-offloaded",
      "a load balancer in front ends TLS (the port must be reachable from it only): serve signed calls in clear",
    )
    .addOption(
      new Option(
        "--tables <json>",
        'physical table names by logical name, e.g. {"routes":"nimbus-prod-Routes"} (--storage aws)',
      ).env("NIMBUS_TABLES"),
    )
    .addOption(
      new Option(
        "--dispatch-function <name>",
        "the stage's Dispatch Lambda, invoked when a send lands on a subscribed topic (--storage aws)",
      ).env("NIMBUS_DISPATCH_FUNCTION"),
    )
    .addOption(
      new Option(
        "--remoting-port <port>",
        "also serve RocketMQ 4.x's remoting protocol (docs/remoting.md): the name server and the first broker here, each further broker at the next port (0: free ports); over TLS with --tls-cert",
      ).argParser(remotingPort),
    )
    .addOption(
      new Option("--workers <n>", "proxy processes on these ports, one per core by default (1: this process alone)")
        .default(defaultWorkers())
        .argParser(parseWorkers),
    )
    .action(async (opts: ProxyOptions & { workers: number }) => {
      if (isPrimaryOf(opts.workers)) return superviseWorkers(opts.workers);
      const worker = workerIndex();
      if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined))
        throw new InvalidArgumentError("--tls-cert and --tls-key go together");
      const tls =
        opts.tlsCert === undefined || opts.tlsKey === undefined
          ? undefined
          : { cert: pem(opts.tlsCert, "certificate"), key: pem(opts.tlsKey, "private key") };
      opts.auth = opts.auth === true || authFromEnv(process.env.NIMBUS_AUTH);
      // A Lambda function's name or ARN is at most 256 characters (as functions/shared/aws-context.ts checks it).
      if (opts.dispatchFunction !== undefined && (opts.dispatchFunction === "" || opts.dispatchFunction.length > 256))
        throw new InvalidArgumentError("--dispatch-function is a Lambda function name or ARN of 1 to 256 characters");
      // Loaded here, not at the top: the server (AWS SDK, SQLite, grpc-js) would slow every other command.
      const { startProxyServer } = await import("../dev/proxy-server.js");
      const { ownLambdaDispatchInvoker } = await import("../config/dispatch-wake.js");
      const wakeDispatch = opts.dispatchFunction ? ownLambdaDispatchInvoker(opts.dispatchFunction) : undefined;
      const proxy = await startProxyServer({
        port: opts.port,
        host: opts.host,
        storage: withTables(storageChoice(opts), opts.tables),
        config: stageConfig(opts),
        ...(opts.auth ? { auth: localAuth(opts) } : {}),
        insecure: opts.insecure === true,
        tls,
        tlsOffloaded: opts.tlsOffloaded === true,
        advertisedHost: opts.advertisedHost,
        remotingPort: opts.remotingPort,
        wakeDispatch,
        ...(worker === 0 ? {} : { bus: workerBus() }),
      });
      const pid = worker === 0 ? process.pid : process.ppid;
      const line = `nimbus: RocketMQ 5 gRPC proxy on ${proxy.grpc.endpoint}${tls ? " (TLS)" : ""} (${describe(opts, pid)})${wakeDispatch ? `, waking ${opts.dispatchFunction}` : ""}; Ctrl-C stops it`;
      const lines = [line, ...remotingLines(proxy.remoting)];
      if (worker === 0) for (const l of lines) console.log(l);
      else announceWorker(worker === 1 ? lines : []);
      stopOnSignals([proxy], worker === 0);
    });
}
