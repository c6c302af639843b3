/** @module Builds a `Broker` from the deployment config, a storage and the API's base URL. */
import type { NimbusConfig } from "../config/nimbus-config.js";
import type { Storage } from "../storage/storage.js";
import { Broker } from "./broker.js";

export function createBroker(
  storage: Storage,
  config: NimbusConfig,
  options: { apiUrl: string; newMessageId: () => string; now?: () => number },
): Broker {
  return new Broker(storage, {
    brokers: config.brokers.map((b) => ({ cluster: config.cluster, ...b, address: options.apiUrl })),
    autoCreateTopic: config.autoCreateTopic,
    defaultTopicQueueNums: config.defaultTopicQueueNums,
    inlineThresholdBytes: config.inlineThresholdBytes,
    retentionMs: config.retentionHours * 3600_000,
    routeCacheMs: config.routeCacheMs,
    newMessageId: options.newMessageId,
    ...(options.now ? { now: options.now } : {}),
  });
}
