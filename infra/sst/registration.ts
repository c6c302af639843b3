/**
 * @module What `NimbusSubscription` (nimbus-mq/sst) sends at deploy time, with no SST types so that a test runs it
 * through the Subscriptions function's routes (test/unit/nimbus-subscription-registration.test.ts): the definition,
 * the API Gateway request carrying it, the check of the answer, and the CLI step for `acl` stages.
 */

/** A subscription's settings as `NimbusSubscription` takes them (the definition of docs/subscriptions.md). */
export interface SubscriptionSettings {
  topic: string;
  /** The consumer group the subscription delivers as (its offsets, retries and `%DLQ%<group>`). */
  group: string;
  filterExpression?: { type: "TAG" | "SQL92"; expression: string };
  batchSize?: number;
  maxBatchingWindowMs?: number;
  maxConcurrency?: number;
  ordering?: "none" | "queue" | "messageGroup";
  maxReconsumeTimes?: number;
  timeoutMs?: number;
  retryBackoff?: { initialMs: number; maxMs: number };
  /** Trace every delivery (SubBefore / SubAfter records, docs/trace.md), to `customizedTraceTopic` if given. */
  enableMsgTrace?: boolean;
  customizedTraceTopic?: string;
}

/** The subscription body of `PUT /subscriptions/{group}` (lib/protocol/endpoints/subscriptions.ts). */
export function definition(args: SubscriptionSettings, functionArn: string): Record<string, unknown> {
  const optional = {
    filterExpression: args.filterExpression,
    batchSize: args.batchSize,
    maxBatchingWindowMs: args.maxBatchingWindowMs,
    maxConcurrency: args.maxConcurrency,
    ordering: args.ordering,
    maxReconsumeTimes: args.maxReconsumeTimes,
    timeoutMs: args.timeoutMs,
    retryBackoff: args.retryBackoff,
    enableMsgTrace: args.enableMsgTrace,
    customizedTraceTopic: args.customizedTraceTopic,
  };
  const set = Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined));
  return { topic: args.topic, target: { type: "lambda", functionArn }, ...set };
}

/** The one CLI step that registers the definition (lib/cli/subscription-commands.ts), for `register: false`. */
export function cliStep(args: SubscriptionSettings, functionArn: string): string {
  const quote = (v: string | number) => `'${String(v).replaceAll("'", "'\\''")}'`;
  const flags: [string, string | number | undefined][] = [
    ["-g", args.group],
    ["-t", args.topic],
    ["--functionArn", functionArn],
    [args.filterExpression?.type === "SQL92" ? "--sql" : "-s", args.filterExpression?.expression],
    ["--batchSize", args.batchSize],
    ["--batchingWindow", args.maxBatchingWindowMs],
    ["--maxConcurrency", args.maxConcurrency],
    ["-o", args.ordering],
    ["-r", args.maxReconsumeTimes],
    ["--timeout", args.timeoutMs],
    ["--customizedTraceTopic", args.customizedTraceTopic],
  ];
  const set = flags.flatMap(([flag, v]) => (v === undefined ? [] : [`${flag} ${quote(v)}`]));
  if (args.enableMsgTrace === true) set.push("--enableMsgTrace");
  return `nimbus updateSubscription ${set.join(" ")}`;
}

/** The request as API Gateway's HTTP API (payload 2.0) hands it to the Subscriptions function. */
export function putRequest(group: string, body: Record<string, unknown>): string {
  return JSON.stringify({
    version: "2.0",
    routeKey: "PUT /subscriptions/{group}",
    rawPath: `/subscriptions/${encodeURIComponent(group)}`,
    rawQueryString: "",
    headers: { "content-type": "application/json" },
    requestContext: { http: { method: "PUT", path: `/subscriptions/${encodeURIComponent(group)}` } },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  });
}

/** Fails the deploy on a refused definition (the function's answer: `{statusCode, body}`). */
export function checkAnswer(result: string): string {
  const answer = JSON.parse(result) as { statusCode?: number; body?: string };
  const status = answer.statusCode ?? 500;
  if (status >= 300)
    throw new Error(`Nimbus refused the subscription (${status}): ${(answer.body ?? "").slice(0, 500)}`);
  return result;
}
