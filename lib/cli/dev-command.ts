/** @module `nimbus dev`: the local broker on 127.0.0.1:9876, on the embedded store or on DynamoDB/S3 endpoints. */
import { type Command, InvalidArgumentError, Option } from "commander";
import { parseDelayLevels } from "../core/delay-levels.js";
import { TARGET_NETWORKS } from "../core/target-address.js";
import { workerBus } from "../dev/process-bus.js";
import { type DevOptions, describe, holdFolder, startServers, stopOnSignals } from "./dev-servers.js";
import { announceWorker, defaultWorkers, isPrimaryOf, parseWorkers, superviseWorkers, workerIndex } from "./workers.js";

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
      const worker = workerIndex();
      // The command's own process holds the folder (its workers share its hold).
      if (worker === 0) holdFolder(opts, true);
      if (isPrimaryOf(opts.workers)) return superviseWorkers(opts.workers);
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
    holdFolder(opts, false);
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
      holdFolder(opts, false);
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
      "serve HTTPS (and the remoting door over TLS) with this PEM certificate (required with --auth on a non-loopback --host)",
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
    )
    .addOption(
      new Option(
        "--route-cache-ms <ms>",
        "how long a process trusts a topic route it read (default 3000; changes made through this server apply at once)",
      ).argParser((value) => {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 0 || n > 60_000) throw new InvalidArgumentError("0 to 60000 ms");
        return n;
      }),
    );
}

/**
 * Starts the server of `role` and, for `nimbus dev --slaves n`, n slaves of each configured broker on the same
 * store (each a broker process of its own role, at the next ports). The first server is the main one.
 */
