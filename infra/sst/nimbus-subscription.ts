/**
 * @module `NimbusSubscription` (`import { NimbusSubscription } from "nimbus-mq/sst"`; docs/subscriptions.md): an
 * application's own SST stack declares a subscription of one of its Lambda functions to a Nimbus topic.
 * 1. The function: created from `handler` (an `sst.aws.Function`), or an existing one by `functionArn`.
 * 2. The grant: a resource-policy statement letting Nimbus's Dispatch role (the Nimbus stage's `dispatchRole`
 *    output) `lambda:InvokeFunction` this function and nothing else. The Dispatch role has no identity grant.
 * 3. The definition, at deploy time: an `aws.lambda.Invocation` of the Nimbus stage's Subscriptions function
 *    (the stage's `subscriptionsFunction` output) with the `PUT /subscriptions/{group}` request, as API Gateway
 *    would pass it. A 4xx/5xx answer fails the deploy. It runs again whenever the definition changes. This
 *    needs the deployer's `lambda:InvokeFunction` on that function, and it works on `iam` and `public` stages,
 *    where API Gateway (not the function) authenticates. On an `acl` stage the function wants a signed request:
 *    set `register: false` and run the one CLI step the component prints (`nimbus updateSubscription`).
 * Removing the component removes the function and the grant. The definition stays: delete it with
 * `nimbus deleteSubscription` (an Invocation runs on create and update only).
 */

export interface NimbusSubscriptionArgs {
  /** The Nimbus stage's outputs this app subscribes on (`sst deploy` prints them; `.sst/outputs.json`). */
  nimbus: {
    /** The `dispatchRole` output: the role that invokes subscriber functions. */
    dispatchRole: $util.Input<string>;
    /** The `subscriptionsFunction` output: the Subscriptions function's name. */
    subscriptionsFunction: $util.Input<string>;
  };
  topic: string;
  /** The consumer group the subscription delivers as (its offsets, retries and `%DLQ%<group>`). */
  group: string;
  /** The handler to create a function from (`"src/orders.handler"`), or `functionArn` of an existing one. */
  handler?: string;
  functionArn?: $util.Input<string>;
  /** More settings of the created function (memory, timeout, link, ...). */
  function?: Omit<sst.aws.FunctionArgs, "handler">;
  filterExpression?: { type: "TAG" | "SQL92"; expression: string };
  batchSize?: number;
  maxBatchingWindowMs?: number;
  maxConcurrency?: number;
  ordering?: "none" | "queue" | "messageGroup";
  maxReconsumeTimes?: number;
  timeoutMs?: number;
  retryBackoff?: { initialMs: number; maxMs: number };
  /** Register the definition at deploy time (default true); false on `acl` stages (see the module comment). */
  register?: boolean;
}

/** The subscription body of `PUT /subscriptions/{group}` (lib/protocol/endpoints/subscriptions.ts). */
function definition(args: NimbusSubscriptionArgs, functionArn: string): Record<string, unknown> {
  const optional = {
    filterExpression: args.filterExpression,
    batchSize: args.batchSize,
    maxBatchingWindowMs: args.maxBatchingWindowMs,
    maxConcurrency: args.maxConcurrency,
    ordering: args.ordering,
    maxReconsumeTimes: args.maxReconsumeTimes,
    timeoutMs: args.timeoutMs,
    retryBackoff: args.retryBackoff,
  };
  const set = Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined));
  return { topic: args.topic, target: { type: "lambda", functionArn }, ...set };
}

/** The one CLI step that registers the definition (lib/cli/subscription-commands.ts), for `register: false`. */
function cliStep(args: NimbusSubscriptionArgs, functionArn: string): string {
  const quote = (v: string | number) => `'${String(v).replaceAll("'", "'\\''")}'`;
  const flags: [string, string | number | undefined][] = [
    ["-g", args.group],
    ["-t", args.topic],
    ["-f", functionArn],
    [args.filterExpression?.type === "SQL92" ? "--sql" : "-e", args.filterExpression?.expression],
    ["-b", args.batchSize],
    ["-w", args.maxBatchingWindowMs],
    ["-c", args.maxConcurrency],
    ["-o", args.ordering],
    ["-r", args.maxReconsumeTimes],
    ["--timeout", args.timeoutMs],
  ];
  const set = flags.flatMap(([flag, v]) => (v === undefined ? [] : [`${flag} ${quote(v)}`]));
  return `nimbus updateSubscription ${set.join(" ")}`;
}

/** The request as API Gateway's HTTP API (payload 2.0) hands it to the Subscriptions function. */
function putRequest(group: string, body: Record<string, unknown>): string {
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
function checkAnswer(result: string): string {
  const answer = JSON.parse(result) as { statusCode?: number; body?: string };
  const status = answer.statusCode ?? 500;
  if (status >= 300)
    throw new Error(`Nimbus refused the subscription (${status}): ${(answer.body ?? "").slice(0, 500)}`);
  return result;
}

export class NimbusSubscription {
  /** The subscriber function (undefined when `functionArn` named an existing one). */
  readonly function: sst.aws.Function | undefined;
  readonly functionArn: $util.Output<string>;
  readonly permission: aws.lambda.Permission;
  /** The deploy-time registration; undefined with `register: false`. */
  readonly registration: aws.lambda.Invocation | undefined;
  /** The definition's answer on a registered deploy; otherwise the CLI step that registers it. */
  readonly registered: $util.Output<string>;

  constructor(name: string, args: NimbusSubscriptionArgs) {
    if ((args.handler === undefined) === (args.functionArn === undefined))
      throw new Error(`NimbusSubscription ${name}: give exactly one of handler and functionArn`);
    this.function =
      args.handler === undefined ? undefined : new sst.aws.Function(name, { ...args.function, handler: args.handler });
    this.functionArn = $output(this.function?.arn ?? (args.functionArn as $util.Input<string>));
    // Only Nimbus's Dispatch role, only this function: the least privilege issue 29 asks for.
    this.permission = new aws.lambda.Permission(`${name}NimbusDispatch`, {
      action: "lambda:InvokeFunction",
      function: this.functionArn,
      principal: args.nimbus.dispatchRole,
    });
    const body = this.functionArn.apply((arn) => definition(args, arn));
    if (args.register === false) {
      this.registration = undefined;
      this.registered = this.functionArn.apply((arn) => cliStep(args, arn));
      return;
    }
    this.registration = new aws.lambda.Invocation(
      `${name}NimbusRegistration`,
      { functionName: args.nimbus.subscriptionsFunction, input: body.apply((b) => putRequest(args.group, b)) },
      { dependsOn: [this.permission] },
    );
    this.registered = this.registration.result.apply(checkAnswer);
  }
}
