/**
 * @module `nimbus-mq/sst`: SST components for applications that use a Nimbus stage from their own SST app
 * (docs/subscriptions.md, docs/deploy.md). Source, not built: SST bundles an app's config with esbuild.
 */
export { NimbusSubscription, type NimbusSubscriptionArgs } from "./nimbus-subscription.js";
export type { SubscriptionSettings } from "./registration.js";
