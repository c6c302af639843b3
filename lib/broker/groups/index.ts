/**
 * @module Consumer groups: RocketMQ's subscription groups (consumeEnable, consumeBroadcastEnable, retryMaxTimes,
 * consumeMessageOrderly, honoured by pulls, POP receives, send-backs and heartbeats), the operator's list of
 * every group, and the broker's bounded lag samples per group.
 */
export { GroupViews, MAX_SAMPLED_GROUPS, type SampleReport } from "./group-views.js";
export { DEFAULT_LAG_SAMPLE_OPTIONS, type LagSample, type LagSampleOptions, LagSamples } from "./lag-samples.js";
export {
  type SubscriptionGroupConfig,
  type SubscriptionGroupSettings,
  SubscriptionGroups,
} from "./subscription-groups.js";
