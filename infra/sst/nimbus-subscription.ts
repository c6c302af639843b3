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
import { checkAnswer, cliStep, definition, putRequest, type SubscriptionSettings } from "./registration.js";

export interface NimbusSubscriptionArgs extends SubscriptionSettings {
  /** The Nimbus stage's outputs this app subscribes on (`sst deploy` prints them; `.sst/outputs.json`). */
  nimbus: {
    /** The `dispatchRole` output: the role that invokes subscriber functions. */
    dispatchRole: $util.Input<string>;
    /** The `subscriptionsFunction` output: the Subscriptions function's name. */
    subscriptionsFunction: $util.Input<string>;
  };
  /** The handler to create a function from (`"src/orders.handler"`), or `functionArn` of an existing one. */
  handler?: string;
  functionArn?: $util.Input<string>;
  /** More settings of the created function (memory, timeout, link, ...). */
  function?: Omit<sst.aws.FunctionArgs, "handler">;
  /** Register the definition at deploy time (default true); false on `acl` stages (see the module comment). */
  register?: boolean;
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
    // Only Nimbus's Dispatch role, only this function: least privilege.
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
