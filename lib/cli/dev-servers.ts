/**
 * @module The server commands' shared work (`nimbus dev`, `namesrv`, `broker`, `proxy`): their options as parsed,
 * the data folder's hold, starting the servers (the main one and `--slaves`), the stage's config with the command
 * line's timings, auth and storage from options and environment, the banner's description, and stopping on signals.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { InvalidArgumentError } from "commander";
import { parseNimbusConfig } from "../config/nimbus-config.js";
import { stageSettings } from "../config/stages.js";
import type { TargetNetworks } from "../core/target-address.js";
import { holdDataDir } from "../dev/data-dir-lock.js";
import type { LocalAuthOptions, LocalServer, ServerRole, StorageChoice } from "../dev/local-server.js";
import { loadMasterKey } from "../dev/master-key.js";
import type { ProcessBus } from "../dev/process-bus.js";

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
  routeCacheMs?: number;
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

/** The embedded store's folder for this command: `nimbus dev` alone, namesrv and broker processes together. */
export function holdFolder(opts: DevOptions, exclusive: boolean): void {
  if (opts.storage === "local") holdDataDir(resolve(opts.dataDir), exclusive);
}

export async function startServers(
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
    ...(opts.routeCacheMs === undefined ? {} : { routeCacheMs: opts.routeCacheMs }),
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
