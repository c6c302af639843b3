/**
 * @module Subscriptions (docs/subscriptions.md): a group's messages of a topic delivered to a Lambda function or an
 * HTTPS endpoint over POP. Definitions at rest (subscription-store.ts), the delivery shapes (delivery.ts), the two
 * targets, and the dispatcher with its batching, ordering, concurrency and retries (dispatcher.ts, settle.ts).
 */
export {
  type DeliverableMessage,
  type DeliveryBody,
  type DeliveryOutcome,
  type DeliveryRecord,
  type DeliveryTarget,
  deliveryBody,
  readPartialFailures,
} from "./delivery.js";
export { DeliveryTracer, dispatcherClientId, MAX_TRACE_TOPICS, type TraceCounts } from "./delivery-trace.js";
export {
  DispatchWake,
  type DispatchWakeOptions,
  type DispatchWakeStats,
  WAKE_CACHE_MS,
  WAKE_WINDOW_MS,
} from "./dispatch-wake.js";
export {
  type DispatcherOptions,
  type DispatchReport,
  MESSAGE_GROUP_PROPERTY,
  orderingKey,
  SubscriptionDispatcher,
  sumReports,
} from "./dispatcher.js";
export { HttpTarget } from "./http-target.js";
export {
  InProcessDispatch,
  type InProcessDispatchOptions,
  SUBSCRIPTION_LIST_REUSE_MS,
} from "./in-process-dispatch.js";
export { LambdaTarget } from "./lambda-target.js";
export type { PopFilter, PopPort, PoppedMessage, PopReceive } from "./pop-port.js";
export { backoffMs } from "./settle.js";
export {
  checkFilterExpression,
  type FilterCheck,
  type Subscription,
  SubscriptionStore,
  subscriptionInfo,
  WAKE_MARKER_PREFIX,
} from "./subscription-store.js";
export { allowedLookup, MAX_TARGET_CA_CERTIFICATES, readTargetCa, targetAgent } from "./target-agent.js";
export { subscriptionTargets } from "./targets.js";
