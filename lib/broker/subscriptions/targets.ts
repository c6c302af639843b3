/**
 * @module The target of a subscription as the dispatcher calls it: an HTTPS target (signed, one deadline) over
 * one connection pool (target-agent.ts: what it trusts), or a Lambda target through one shared Lambda client,
 * made on first use (`nimbus dev` and the AWS `Dispatch` function differ only in the client's endpoint and
 * credentials).
 */
import type { LambdaClient } from "@aws-sdk/client-lambda";
import type { Dispatcher } from "undici";
import type { TargetNetworks } from "../../core/target-address.js";
import type { DeliveryTarget } from "./delivery.js";
import { HttpTarget } from "./http-target.js";
import { LambdaTarget } from "./lambda-target.js";
import type { Subscription } from "./subscription-store.js";

/** `httpAgent`: the pool of HTTPS targets, made by `targetAgent(networks)` (it checks the addresses names resolve to). */
export function subscriptionTargets(
  lambdaClient: () => LambdaClient,
  httpAgent: Dispatcher,
  networks: TargetNetworks,
): (s: Subscription) => DeliveryTarget {
  return (s) =>
    s.target.type === "http"
      ? new HttpTarget(s.target.url, s.target.secret, s.timeoutMs, httpAgent, networks)
      : new LambdaTarget(lambdaClient(), s.target.functionArn, s.timeoutMs);
}
