/**
 * @module Builds a `Broker` from the deployment config, a storage and the API's base URL: the one mapping
 * of settings to broker options, used by the Lambda handlers and the local server (the broker itself
 * never reads the config).
 */
import { Broker } from "../broker/index.js";
import { AesGcmSealer } from "../broker/security/index.js";
import type { TargetNetworks } from "../core/target-address.js";
import type { Storage } from "../storage/storage.js";
import type { NimbusConfig } from "./nimbus-config.js";

export function createBroker(
  storage: Storage,
  config: NimbusConfig,
  options: {
    apiUrl: string;
    newMessageId: () => string;
    now?: () => number;
    objectReplicationGraceMs?: number;
    /** How long a hot queue's writer uses a leased range (QueueLogOptions.rangeUseMs; tests make it long). */
    rangeUseMs?: number | undefined;
    /** The stage's seal key of webhook secrets (32 bytes): NIMBUS_SEAL_KEY, or nimbus dev's key file. */
    sealKey?: Uint8Array | undefined;
    /** What subscription targets may reach when the config does not say: `public` on AWS, `loopback` in nimbus dev. */
    defaultTargetNetworks?: TargetNetworks;
    /** Merged appends above this many bytes go to a shared object (`nimbus proxy`: QueueLogOptions). */
    mergedInlineThresholdBytes?: number;
  },
): Broker {
  return new Broker(storage, {
    brokers: config.brokers.map((b) => ({ cluster: config.cluster, ...b, address: options.apiUrl })),
    autoCreateTopic: config.autoCreateTopic,
    defaultTopicQueueNums: config.defaultTopicQueueNums,
    inlineThresholdBytes: config.inlineThresholdBytes,
    hotTopics: config.hotTopics,
    mergedInlineThresholdBytes: options.mergedInlineThresholdBytes,
    retentionMs: config.retentionHours * 3600_000,
    routeCacheMs: config.routeCacheMs,
    queueLocks: { leaseMs: config.queueLockLeaseMs, skewMarginMs: config.queueLockSkewMarginMs },
    transactions: {
      timeoutMs: config.transactionTimeoutMs,
      checkIntervalMs: config.transactionCheckIntervalMs,
      checkMax: config.transactionCheckMax,
    },
    messageDelayLevel: config.messageDelayLevel,
    timerMaxDelayMs: config.timerMaxDelaySec * 1000,
    timerSweepIntervalMs: config.timerSweepIntervalMs,
    pop: {
      maxDeliveryAttempts: config.popMaxDeliveryAttempts,
      fifoGroups: config.popFifoGroups,
      maxLongPollMs: config.popMaxLongPollMs,
    },
    lagSamples: { intervalMs: config.lagSampleIntervalMs },
    newMessageId: options.newMessageId,
    ...(options.sealKey === undefined ? {} : { secretSealer: new AesGcmSealer(options.sealKey) }),
    targetNetworks: config.subscriptionTargetNetworks ?? options.defaultTargetNetworks ?? "public",
    objectReplicationGraceMs: options.objectReplicationGraceMs,
    rangeUseMs: options.rangeUseMs,
    ...(options.now ? { now: options.now } : {}),
  });
}
