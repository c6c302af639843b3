/** @module `nimbus dev`: the local broker on 127.0.0.1:9876, on the embedded store or on DynamoDB/S3 endpoints. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { parseNimbusConfig } from "../config/nimbus-config.js";
import { stageSettings } from "../config/stages.js";
import { parseDelayLevels } from "../core/delay-levels.js";
import { TARGET_NETWORKS, type TargetNetworks } from "../core/target-address.js";
import type { LocalAuthOptions, LocalServer, ServerRole, StorageChoice } from "../dev/local-server.js";
import { loadMasterKey } from "../dev/master-key.js";
import { type ProcessBus, workerBus } from "../dev/process-bus.js";
import { announceWorker, defaultWorkers, isPrimaryOf, parseWorkers, superviseWorkers, workerIndex } from "./workers.js";

export interface DevOptions {
  port: number;
  host: string;
  dataDir: string;
  storage: "local" | "aws";
  flush: "async" | "sync";
  region: string;
  bucket?: string;
  tablePrefix: string;
  dynamoEndpoint?: string;
  s3Endpoint?: string;
  provision: boolean;
  stage: string;
  transactionTimeout?: number;
  transactionCheckInterval?: number;
  messageDelayLevel?: string;
  timerMaxDelaySec?: number;
  slaves?: number;
  auth?: boolean;
  rootUser?: string;
  rootPassword?: string;
  insecure?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  targetCa?: string;
  targetNetworks?: TargetNetworks;
  grpcPort?: number;
}

const count = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 1000) throw new InvalidArgumentError("a whole number from 0");
  return n;
};

const ms = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("a time in ms is a non-negative integer");
  return n;
};

const port = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("a port is 0..65535");
  return n;
};

export function addDevCommand(program: Command): void {
  serverOptions(
    program
      .command("dev")
      .description("run the local broker: the name server and the brokers of the stage (broker-a and broker-b)"),
    9876,
  )
    .addOption(
      new Option("--slaves <n>", "start n read-only slaves of each broker, each at its own port (after --port)")
        .default(0)
        .argParser(count),
    )
    .addOption(
      new Option(
        "--grpc-port <port>",
        "serve RocketMQ 5's gRPC protocol here too (docs/grpc.md): default 8081, or --port - 1795 beside another --port, a free port with --port 0; 0 turns it off",
      ).argParser(port),
    )
    .addOption(
      new Option("--workers <n>", "server processes on this store, one per core by default (1: this process alone)")
        .default(defaultWorkers())
        .argParser(parseWorkers),
    )
    .action(async (opts: DevOptions & { workers: number }) => {
      if (isPrimaryOf(opts.workers)) return superviseWorkers(opts.workers);
      const worker = workerIndex();
      const inCluster = worker === 0 ? {} : { bus: workerBus(), background: worker === 1 };
      const servers = await startServers(opts, { kind: "all" }, inCluster);
      // `kill -9 <pid>` stops the broker: with workers, the primary (they die with it).
      const pid = worker === 0 ? process.pid : process.ppid;
      const lines = [
        `nimbus: local broker listening on ${servers[0]?.url} (${describe(opts, pid)}); Ctrl-C stops it`,
        `nimbus: console at ${servers[0]?.url}/console/`,
      ];
      const grpc = servers[0]?.grpc;
      if (grpc) lines.push(`nimbus: RocketMQ 5 gRPC endpoint on ${grpc.endpoint}`);
      for (const slave of servers.slice(1)) {
        const role = slave.context.role;
        if (role.kind === "broker")
          lines.push(`nimbus: ${role.brokerName} slave ${role.brokerId} listening on ${slave.url}`);
      }
      if (worker === 0) for (const line of lines) console.log(line);
      else announceWorker(worker === 1 ? lines : []);
      stopOnSignals(servers, worker === 0);
    });

  serverOptions(
    program.command("namesrv").description("run a name server (routes, topics, clients) until Ctrl-C"),
    9876,
  ).action(async (opts: DevOptions) => {
    const servers = await startServers(opts, { kind: "namesrv" });
    console.log(`nimbus: name server listening on ${servers[0]?.url} (${describe(opts)}); Ctrl-C stops it`);
    stopOnSignals(servers);
  });

  serverOptions(
    program
      .command("broker")
      .description("run one broker (brokerId 0: the master; > 0: a read-only slave) on a shared store until Ctrl-C"),
    10911,
  )
    .requiredOption("--broker-name <name>", "the broker's name, e.g. broker-a")
    .addOption(new Option("--broker-id <id>", "0 for the master, > 0 for a slave").default(0).argParser(count))
    .option("--cluster <name>", "the cluster it belongs to", "DefaultCluster")
    .action(async (opts: DevOptions & { brokerName: string; brokerId: number; cluster: string }) => {
      const role = { kind: "broker" as const, brokerName: opts.brokerName, brokerId: opts.brokerId };
      const servers = await startServers({ ...opts, clusterName: opts.cluster }, role);
      const what = opts.brokerId === 0 ? "master" : `slave ${opts.brokerId}`;
      console.log(
        `nimbus: ${opts.brokerName} ${what} listening on ${servers[0]?.url} (${describe(opts)}); Ctrl-C stops it`,
      );
      stopOnSignals(servers);
    });
}

/** The options every server command takes: address, store, stage and transaction timings. */
export function serverOptions(command: Command, defaultPort: number): Command {
  return command
    .addOption(new Option("--port <port>", "port to listen on (0: any free port)").default(defaultPort).argParser(port))
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--data-dir <dir>", "embedded store folder (--storage local)", "./.nimbus")
    .addOption(
      new Option("--flush <mode>", "ack after the OS has the write (async) or after fsync (sync) (--storage local)")
        .choices(["async", "sync"])
        .default("async"),
    )
    .addOption(
      new Option("--storage <kind>", "where messages and metadata live").choices(["local", "aws"]).default("local"),
    )
    .option("--region <region>", "AWS region (--storage aws)", "us-east-1")
    .addOption(new Option("--bucket <name>", "S3 bucket for message batches (--storage aws)").env("NIMBUS_BUCKET"))
    .option("--table-prefix <prefix>", "DynamoDB table name prefix (--storage aws)", "nimbus-")
    .option("--dynamo-endpoint <url>", "DynamoDB endpoint, e.g. an emulator (--storage aws)")
    .option("--s3-endpoint <url>", "S3 endpoint, e.g. an emulator (--storage aws)")
    .option("--stage <name>", "take the broker settings of this stage from lib/config/stages.ts", "local")
    .option("--provision", "create the tables and the bucket if missing (--storage aws)", false)
    .addOption(
      new Option(
        "--auth",
        "require signed requests and ACLs on every route but GET /health (docs/security.md); env NIMBUS_AUTH=on|off",
      ),
    )
    .addOption(new Option("--root-user <name>", "the Super user of --auth").env("NIMBUS_ROOT_USER").default("root"))
    .addOption(
      new Option("--root-password <password>", "the Super user's secret (better: NIMBUS_ROOT_PASSWORD)").env(
        "NIMBUS_ROOT_PASSWORD",
      ),
    )
    .option("--insecure", "serve a non-loopback --host without --auth (anyone who reaches it may do anything)", false)
    .option(
      "--tls-cert <file>",
      "serve HTTPS with this PEM certificate (required with --auth on a non-loopback --host)",
    )
    .option("--tls-key <file>", "the PEM private key of --tls-cert")
    .option(
      "--target-ca <file>",
      "PEM CA certificates that subscriptions' HTTPS targets may chain to, beside Node's roots (docs/subscriptions.md)",
    )
    .addOption(
      new Option(
        "--target-networks <kind>",
        "what subscriptions' HTTPS targets may reach: public addresses, also private ones, or also loopback " +
          "(default: the stage's subscriptionTargetNetworks, else loopback; link-local never)",
      ).choices(TARGET_NETWORKS),
    )
    .addOption(
      new Option(
        "--transaction-timeout <ms>",
        "first check-back of a half message after this long (default 6000)",
      ).argParser(ms),
    )
    .addOption(
      new Option(
        "--transaction-check-interval <ms>",
        "time between check-backs of a transaction (default 60000)",
      ).argParser((value) => {
        const n = ms(value);
        if (n < 100) throw new InvalidArgumentError("a check interval is at least 100 ms");
        return n;
      }),
    )
    .addOption(
      new Option(
        "--message-delay-level <levels>",
        'the delay of each level, level 1 first (default "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h")',
      ).argParser((value) => {
        try {
          parseDelayLevels(value);
        } catch (err) {
          throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
        }
        return value;
      }),
    )
    .addOption(
      new Option(
        "--timer-max-delay-sec <s>",
        "the furthest ahead a timer message may be due (default 604800: 7 days)",
      ).argParser((value) => {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 60) throw new InvalidArgumentError("a whole number of seconds, at least 60");
        return n;
      }),
    );
}

/**
 * Starts the server of `role` and, for `nimbus dev --slaves n`, n slaves of each configured broker on the same
 * store (each a broker process of its own role, at the next ports). The first server is the main one.
 */
async function startServers(
  opts: DevOptions & { clusterName?: string },
  role: ServerRole,
  inCluster: { bus?: ProcessBus; background?: boolean } = {},
): Promise<LocalServer[]> {
  // Loaded here, not at the top: the server (AWS SDK, SQLite) would add ~0.4 s to every other command.
  const { startLocalServer, serveOn, ReplayGuard, PortInUseError } = await import("../dev/local-server.js");
  // A taken port names the option that moves it.
  const saying = (option: string) => (err: unknown) => {
    if (!(err instanceof PortInUseError)) throw err;
    const which = err.door === "gRPC" ? "--grpc-port (0 turns gRPC off)" : option;
    throw new Error(`${err.message}: another process listens there; choose another with ${which}`);
  };
  const config = stageConfig(opts);
  opts.auth = opts.auth === true || authFromEnv(process.env.NIMBUS_AUTH);
  // One nonce cache for the master and its --slaves: a request one of them accepted is a replay on another.
  const guard = {
    ...(opts.auth ? { auth: { ...localAuth(opts), replay: new ReplayGuard() } } : {}),
    insecure: opts.insecure === true,
    tls: tlsFiles(opts),
    ...(opts.targetCa === undefined ? {} : { targetCaPem: readFileSync(opts.targetCa) }),
    // Webhook secrets' seal key: NIMBUS_SEAL_KEY, else a key file made once in the data folder (whatever --storage).
    sealKey: loadMasterKey(process.env.NIMBUS_SEAL_KEY, resolve(opts.dataDir, "seal.key")),
  };
  const main = await startLocalServer({
    port: opts.port,
    host: opts.host,
    storage: storageChoice(opts),
    config,
    role,
    ...(role.kind === "all" ? grpcPortOf(opts) : {}),
    ...guard,
    ...inCluster,
  }).catch(saying("--port"));
  const servers = [main];
  let next = opts.port === 0 ? 0 : opts.port + 1;
  try {
    for (const b of config.brokers) {
      for (let brokerId = 1; brokerId <= (opts.slaves ?? 0); brokerId++) {
        const slaveRole = { kind: "broker" as const, brokerName: b.brokerName, brokerId };
        servers.push(
          await serveOn(main.storage, { port: next, host: opts.host, config, role: slaveRole, ...guard }, false).catch(
            saying("--port (the slaves take the ports after it)"),
          ),
        );
        if (next !== 0) next++;
      }
    }
  } catch (err) {
    // A slave that cannot start (its port is taken) stops everything: no half-started broker keeps running.
    for (const s of servers.slice(1)) await s.close();
    await main.close();
    throw err;
  }
  return servers;
}

/** RocketMQ's ports: the name server's 9876 and the proxy's gRPC 8081. */
const DEFAULT_HTTP_PORT = 9876;
const DEFAULT_GRPC_PORT = 8081;

/**
 * `--grpc-port`: given (0: off); else it follows `--port` at the distance of RocketMQ's defaults (9876 → 8081,
 * 9877 → 8082: a second `nimbus dev --port 9877` does not collide with the first), and a free port beside
 * `--port 0`.
 */
export function grpcPortOf(opts: { port: number; grpcPort?: number | undefined }): { grpcPort?: number } {
  if (opts.grpcPort === undefined) {
    if (opts.port === 0) return { grpcPort: 0 };
    const follows = opts.port - (DEFAULT_HTTP_PORT - DEFAULT_GRPC_PORT);
    return { grpcPort: follows > 0 ? follows : opts.port + 1 };
  }
  return opts.grpcPort === 0 ? {} : { grpcPort: opts.grpcPort };
}

/** The stage's settings with the command line's timings over them. */
export function stageConfig(opts: DevOptions & { clusterName?: string }) {
  return parseNimbusConfig({
    ...stageSettings(opts.stage).nimbus,
    ...(opts.clusterName === undefined ? {} : { cluster: opts.clusterName }),
    ...(opts.transactionTimeout === undefined ? {} : { transactionTimeoutMs: opts.transactionTimeout }),
    ...(opts.transactionCheckInterval === undefined
      ? {}
      : { transactionCheckIntervalMs: opts.transactionCheckInterval }),
    ...(opts.messageDelayLevel === undefined ? {} : { messageDelayLevel: opts.messageDelayLevel }),
    ...(opts.timerMaxDelaySec === undefined ? {} : { timerMaxDelaySec: opts.timerMaxDelaySec }),
    ...(opts.targetNetworks === undefined ? {} : { subscriptionTargetNetworks: opts.targetNetworks }),
  });
}

/**
 * `--auth`: the root user from --root-user/--root-password (or NIMBUS_ROOT_USER/NIMBUS_ROOT_PASSWORD), and the
 * master key that seals users' secrets from NIMBUS_ACL_MASTER_KEY or `<data-dir>/acl-master.key` (made once,
 * readable by its owner only).
 */
/** The certificate and key of --tls-cert/--tls-key, read once; both or neither. */
function tlsFiles(opts: DevOptions): { cert: Buffer; key: Buffer } | undefined {
  if (opts.tlsCert === undefined && opts.tlsKey === undefined) return undefined;
  if (opts.tlsCert === undefined || opts.tlsKey === undefined)
    throw new InvalidArgumentError("--tls-cert and --tls-key go together");
  return { cert: readFileSync(opts.tlsCert), key: readFileSync(opts.tlsKey) };
}

/** NIMBUS_AUTH: 1/true/on/acl turn auth on, 0/false/off or unset leave it off; anything else is refused. */
export function authFromEnv(value: string | undefined): boolean {
  const v = (value ?? "").trim().toLowerCase();
  if (["1", "true", "on", "acl", "yes"].includes(v)) return true;
  if (["", "0", "false", "off", "no"].includes(v)) return false;
  throw new InvalidArgumentError(`NIMBUS_AUTH is on or off (1/true/on, 0/false/off), not ${JSON.stringify(value)}`);
}

export function localAuth(opts: DevOptions): LocalAuthOptions {
  if (!opts.rootPassword)
    throw new InvalidArgumentError("--auth needs --root-password (or NIMBUS_ROOT_PASSWORD) for the root user");
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(opts.rootUser ?? ""))
    throw new InvalidArgumentError("--root-user is 1 to 64 letters, digits, - and _");
  return {
    root: { username: opts.rootUser ?? "root", password: opts.rootPassword },
    masterKey: loadMasterKey(process.env.NIMBUS_ACL_MASTER_KEY, resolve(opts.dataDir, "acl-master.key")),
  };
}

export function storageChoice(opts: DevOptions): StorageChoice {
  if (opts.storage === "local") return { kind: "local", dataDir: resolve(opts.dataDir), flush: opts.flush };
  if (!opts.bucket) throw new InvalidArgumentError("--storage aws needs --bucket");
  return {
    kind: "aws",
    provision: opts.provision,
    region: opts.region,
    bucket: opts.bucket,
    tablePrefix: opts.tablePrefix,
    ...(opts.dynamoEndpoint ? { dynamoEndpoint: opts.dynamoEndpoint } : {}),
    ...(opts.s3Endpoint ? { s3Endpoint: opts.s3Endpoint } : {}),
  };
}

export function describe(opts: DevOptions, pid = process.pid): string {
  const store =
    opts.storage === "local"
      ? `embedded store in ${resolve(opts.dataDir)}, --flush ${opts.flush}`
      : `DynamoDB + S3 bucket ${opts.bucket}`;
  const auth = opts.auth === true || authFromEnv(process.env.NIMBUS_AUTH);
  // The pid first: `kill -9 <pid>` stops this process, where `$!` of `npx nimbus ... &` is npx's wrapper.
  return `pid ${pid}, ${store}, ${auth ? `auth on, root user ${opts.rootUser}` : opts.insecure ? "NO AUTH, --insecure" : "no auth"}`;
}

/** Closes `servers` on SIGINT/SIGTERM and exits; `say` prints the stop (a worker's primary says it instead). */
export function stopOnSignals(servers: readonly { close(): Promise<void> }[], say = true): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (say) console.log(`nimbus: ${signal}, stopping`);
    // The slaves first: the main server closes the store they share.
    Promise.all(servers.slice(1).map((s) => s.close()))
      .then(() => servers[0]?.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          console.error("nimbus: stop failed:", err);
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}
