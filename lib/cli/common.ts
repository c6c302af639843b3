/**
 * @module What every API command of `nimbus` shares: the `-n/--namesrv` and `--json` options, number
 * parsers, usage errors (exit 2) and the one-line rendering of failures (exit 1).
 */
import { type Command, CommanderError, InvalidArgumentError, Option } from "commander";
import type { IamAuth, NimbusCredentials, PulledMessage, PullResponse } from "../client/transport/index.js";
import { NimbusApi } from "../client/transport/index.js";
import { ErrorCode, isNimbusError, type NimbusError } from "../core/errors.js";

/** RocketMQ's name server port on this machine: where `nimbus dev` listens by default. */
export const DEFAULT_NAMESRV = "http://127.0.0.1:9876";

/** The options every API command has. */
export interface ApiOptions {
  namesrv: string;
  json?: boolean;
  /** Sign requests with SigV4 (a stage with IAM auth), credentials from AWS_ACCESS_KEY_ID & co. */
  iam?: boolean;
  region?: string;
}

/** A command that talks to the API: `-n/--namesrv` (or `NIMBUS_URL`) and `--json`, as mqadmin's `-n`. */
export function apiCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .addOption(
      new Option("-n, --namesrv <url>", "the Nimbus API URL (mqadmin's name server address)")
        .env("NIMBUS_URL")
        .default(DEFAULT_NAMESRV),
    )
    .option("--json", "print JSON (for scripts) instead of tables")
    .addOption(
      new Option("--iam", "sign requests with SigV4 for a stage with IAM auth (AWS_ACCESS_KEY_ID, ...)").env(
        "NIMBUS_IAM",
      ),
    )
    .addOption(new Option("--region <region>", "the stage's AWS region, with --iam").env("AWS_REGION"));
}

/**
 * A Nimbus user's keys from NIMBUS_ACCESS_KEY and NIMBUS_SECRET_KEY (docs/security.md), never from the
 * command line, where other users of the machine could read the secret; undefined when neither is set.
 */
export function credentialsFromEnvironment(env = process.env): NimbusCredentials | undefined {
  const accessKey = env.NIMBUS_ACCESS_KEY;
  const secretKey = env.NIMBUS_SECRET_KEY;
  if (!accessKey && !secretKey) return undefined;
  if (!accessKey || !secretKey)
    throw new InvalidArgumentError("set both NIMBUS_ACCESS_KEY and NIMBUS_SECRET_KEY (a user's name and password)");
  return { accessKey, secretKey };
}

/** The API client of a command. `host:port` without a scheme means `http://host:port`, as mqadmin's `-n`. */
export function connect(opts: ApiOptions, timeoutMs = 10_000): NimbusApi {
  const endpoints = opts.namesrv
    .split(";")
    .map((e) => e.trim())
    .filter((e) => e.length > 0)
    .map((e) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(e) ? e : `http://${e}`));
  if (endpoints.length === 0) throw new InvalidArgumentError("--namesrv is empty");
  const credentials = opts.iam ? undefined : credentialsFromEnvironment();
  return new NimbusApi({
    endpoints,
    timeoutMs,
    ...(opts.iam ? { iam: iamFromEnvironment(opts.region) } : {}),
    ...(credentials ? { credentials } : {}),
  });
}

/** SigV4 credentials from the standard AWS variables (the CLI is an edge: lib/ never reads them). */
function iamFromEnvironment(region: string | undefined): IamAuth {
  const env = process.env;
  const resolvedRegion = region ?? env.AWS_DEFAULT_REGION;
  if (!env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY) {
    throw new InvalidArgumentError(
      "--iam needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials)",
    );
  }
  if (!resolvedRegion) throw new InvalidArgumentError("--iam needs --region (or AWS_REGION)");
  return {
    region: resolvedRegion,
    credentials: {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    },
  };
}

/** An option parser for integers in `[min, max]` (commander reports a bad value as a usage error). */
export function intIn(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `an integer >= ${min} is needed`
          : `an integer from ${min} to ${max} is needed`,
      );
    }
    return n;
  };
}

/** A byte size: `512`, `4k`/`4KiB`, `1m`/`1MiB` (powers of 1024). */
export function byteSize(value: string): number {
  const match = /^(\d+)\s*(|b|k|kb|kib|m|mb|mib)$/i.exec(value.trim());
  const unit = match?.[2]?.toLowerCase()[0] ?? "";
  const n =
    match?.[1] === undefined ? Number.NaN : Number(match[1]) * (unit === "k" ? 1024 : unit === "m" ? 1024 ** 2 : 1);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("a size such as 128, 4k or 1m is needed");
  return n;
}

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Stops the command with a usage error: one line on stderr, exit code 2 (as commander's own errors). */
export function usage(cmd: Command, message: string): never {
  cmd.error(message, { exitCode: 2, code: "nimbus.usage" });
}

/** Thrown by the exit override: the command line was wrong (exit 2) or help was asked for (exit 0). */
export class CommandLineExit extends Error {
  constructor(readonly exitCode: number) {
    super("command line exit");
  }
}

/**
 * Makes `program` (and the commands added after this call) report usage errors as one line
 * (`nimbus: <message>`) and throw `CommandLineExit` instead of exiting, so that `main` picks the code.
 */
export function configureErrors(program: Command): void {
  program
    .configureOutput({ outputError: (str, write) => write(`nimbus: ${oneLine(str.replace(/^error: /, ""))}\n`) })
    .exitOverride((err: CommanderError) => {
      throw new CommandLineExit(err.exitCode === 0 ? 0 : 2);
    });
}

/** Joins a multi-line message (commander's "Did you mean ...?") into one line. */
export function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, " ");
}

/**
 * One line for a failure: `TOPIC_NOT_EXIST: <message>` for API errors; for an API nothing answers,
 * `cannot reach the Nimbus API (connect ECONNREFUSED ...)` without the SDK's retryable code.
 */
export function describeFailure(err: unknown): string {
  if (isNimbusError(err)) {
    // A refused connection is not flow control: no SYSTEM_BUSY (which a RocketMQ user reads as "back off").
    return networkReason(err.cause) ?? `${err.code}: ${err.message}${unsignedHint(err)}`;
  }
  if (err instanceof CommanderError) return err.message.replace(/^error: /, "");
  return err instanceof Error ? err.message : String(err);
}

/** An unsigned call refused by a server with auth: how to sign (the variables every command reads). */
function unsignedHint(err: NimbusError): string {
  if (err.code !== ErrorCode.UNAUTHENTICATED) return "";
  if (process.env.NIMBUS_ACCESS_KEY !== undefined && process.env.NIMBUS_SECRET_KEY !== undefined) return "";
  return " (this server signs its callers: set NIMBUS_ACCESS_KEY and NIMBUS_SECRET_KEY to a user's name and password, docs/cli.md)";
}

/**
 * Connection failures hide the reason (ECONNREFUSED, ENOTFOUND) two causes down: under the SDK's
 * `HttpExchangeError` (a timeout is not one of them: the broker may be slow, not gone), or under `fetch`'s
 * `TypeError`.
 */
function networkReason(cause: unknown): string | undefined {
  if (!(cause instanceof Error)) return undefined;
  const exchange = cause.name === "HttpExchangeError" && !(cause as Error & { timedOut?: boolean }).timedOut;
  if (!exchange && cause.name !== "TypeError") return undefined;
  // Node's AggregateError (localhost: ::1 and 127.0.0.1 both refused) has an empty message but a code.
  const inner = cause.cause as (Error & { code?: string }) | undefined;
  const detail = (inner instanceof Error && (inner.message || inner.code)) || cause.message;
  return `cannot reach the Nimbus API (${detail}); is the broker running (nimbus dev) and is -n/--namesrv or NIMBUS_URL right?`;
}

/** The consumer group the admin tools read with (mqadmin's TOOLS_CONSUMER): it commits nothing. */
export const TOOLS_GROUP = "TOOLS_CONSUMER";

/**
 * The one message stored at `offset` of a queue, read as the admin tools read (TOOLS_CONSUMER, one message),
 * or undefined with the pull's answer (its min and max offsets) when there is none there.
 */
export async function messageAt(
  api: NimbusApi,
  where: { topic: string; brokerName: string; queueId: number; offset: number },
): Promise<{ message: PulledMessage | undefined; pulled: PullResponse }> {
  const pulled = await api.pull({
    consumerGroup: TOOLS_GROUP,
    topic: where.topic,
    brokerName: where.brokerName,
    queueId: where.queueId,
    queueOffset: where.offset,
    maxMsgNums: 1,
  });
  const m = pulled.messages[0];
  const found = pulled.pullStatus === "FOUND" && m !== undefined && m.queueOffset === where.offset;
  return { message: found ? m : undefined, pulled };
}
