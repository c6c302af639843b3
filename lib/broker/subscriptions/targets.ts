/**
 * @module The target of a subscription as the dispatcher calls it: an HTTPS target (signed, one deadline) or a
 * Lambda target through one shared Lambda client, made on first use (`nimbus dev` and the AWS `Dispatch`
 * function differ only in the client's endpoint and credentials).
 */
import type { LambdaClient } from "@aws-sdk/client-lambda";
import type { DeliveryTarget } from "./delivery.js";
import { HttpTarget } from "./http-target.js";
import { LambdaTarget } from "./lambda-target.js";
import type { Subscription } from "./subscription-store.js";

export function subscriptionTargets(lambdaClient: () => LambdaClient): (s: Subscription) => DeliveryTarget {
  return (s) =>
    s.target.type === "http"
      ? new HttpTarget(s.target.url, s.target.secret, s.timeoutMs)
      : new LambdaTarget(lambdaClient(), s.target.functionArn, s.timeoutMs);
}
