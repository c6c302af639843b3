/** @module `nimbus dev`: the local broker on 127.0.0.1:9876, on the embedded store or on DynamoDB/S3 endpoints. */
import { resolve } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { parseNimbusConfig } from "../config/nimbus-config.js";
import { stageSettings } from "../config/stages.js";
import type { LocalServer, StorageChoice } from "../dev/local-server.js";

interface DevOptions {
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
}

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
  program
    .command("dev")
    .description("run the local broker (brokers broker-a and broker-b in DefaultCluster) until Ctrl-C")
    .addOption(new Option("--port <port>", "port to listen on (0: any free port)").default(9876).argParser(port))
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
    .option("--bucket <name>", "S3 bucket for message batches (--storage aws)")
    .option("--table-prefix <prefix>", "DynamoDB table name prefix (--storage aws)", "nimbus-")
    .option("--dynamo-endpoint <url>", "DynamoDB endpoint, e.g. an emulator (--storage aws)")
    .option("--s3-endpoint <url>", "S3 endpoint, e.g. an emulator (--storage aws)")
    .option("--stage <name>", "take the broker settings of this stage from lib/config/stages.ts", "local")
    .option("--provision", "create the tables and the bucket if missing (--storage aws)", false)
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
    .action(async (opts: DevOptions) => {
      // Loaded here, not at the top: the server (AWS SDK, SQLite) would add ~0.4 s to every other command.
      const { startLocalServer } = await import("../dev/local-server.js");
      const config = parseNimbusConfig({
        ...stageSettings(opts.stage).nimbus,
        ...(opts.transactionTimeout === undefined ? {} : { transactionTimeoutMs: opts.transactionTimeout }),
        ...(opts.transactionCheckInterval === undefined
          ? {}
          : { transactionCheckIntervalMs: opts.transactionCheckInterval }),
      });
      const server = await startLocalServer({ port: opts.port, host: opts.host, storage: storageChoice(opts), config });
      console.log(`nimbus: local broker listening on ${server.url} (${describe(opts)}); Ctrl-C stops it`);
      stopOnSignals(server);
    });
}

function storageChoice(opts: DevOptions): StorageChoice {
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

function describe(opts: DevOptions): string {
  return opts.storage === "local"
    ? `embedded store in ${resolve(opts.dataDir)}, --flush ${opts.flush}`
    : `DynamoDB + S3 bucket ${opts.bucket}`;
}

function stopOnSignals(server: LocalServer): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`nimbus: ${signal}, stopping`);
    server.close().then(
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
