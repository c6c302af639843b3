/**
 * @module The settings of a `PushConsumer` besides the shared ones (consumer-options.ts), checked and with
 * RocketMQ's defaults: batch size, pull interval, listener threads, span, reconsume bounds and delays,
 * the orderly listener's suspend time and lock renewal, the shutdown wait.
 *
 * @example
 * const settings = resolvePushSettings({ consumerGroup: "g", endpoints: url }); // settings.consumeMessageBatchMaxSize === 1
 */
import { checkRange, DEFAULT_LOCAL_RECONSUME_DELAY_MS, type PushConsumerOptions } from "./consumer-options.js";

export function resolvePushSettings(options: PushConsumerOptions) {
  const reconsume = options.reconsumeDelayMillis;
  const maxReconsumeTimes = options.maxReconsumeTimes ?? 16;
  return {
    consumeMessageBatchMaxSize: checkRange(
      "consumeMessageBatchMaxSize",
      options.consumeMessageBatchMaxSize ?? 1,
      1,
      1024,
    ),
    pullInterval: checkRange("pullInterval", options.pullInterval ?? 0, 0, 65535),
    consumeThreadMax: checkRange("consumeThreadMax", options.consumeThreadMax ?? 20, 1, 1000),
    consumeConcurrentlyMaxSpan: checkRange(
      "consumeConcurrentlyMaxSpan",
      options.consumeConcurrentlyMaxSpan ?? 2000,
      1,
      65535,
    ),
    maxReconsumeTimes: maxReconsumeTimes === -1 ? 16 : checkRange("maxReconsumeTimes", maxReconsumeTimes, 0, 1000),
    /**
     * What a send-back names: the consumer's own maxReconsumeTimes when set; unset (or -1), none, so the broker
     * applies the group's retryMaxTimes (its subscription group, mqadmin's updateSubGroup -r; 16 by default).
     */
    sendBackMaxReconsumeTimes:
      options.maxReconsumeTimes === undefined || maxReconsumeTimes === -1 ? undefined : maxReconsumeTimes,
    reconsumeDelay: typeof reconsume === "function" ? reconsume : () => reconsume ?? DEFAULT_LOCAL_RECONSUME_DELAY_MS,
    // An orderly consumer retries for ever by default (RocketMQ's orderly maxReconsumeTimes -1).
    orderlyMaxReconsumeTimes:
      maxReconsumeTimes === -1 || options.maxReconsumeTimes === undefined
        ? Number.POSITIVE_INFINITY
        : checkRange("maxReconsumeTimes", maxReconsumeTimes, 0, 1000),
    suspendCurrentQueueTimeMillis: checkRange(
      "suspendCurrentQueueTimeMillis",
      options.suspendCurrentQueueTimeMillis ?? 1000,
      10,
      30_000,
    ),
    lockRenewIntervalMillis: checkRange(
      "lockRenewIntervalMillis",
      options.lockRenewIntervalMillis ?? 20_000,
      1,
      2 ** 31 - 1,
    ),
    awaitTermination: checkRange(
      "awaitTerminationMillisWhenShutdown",
      options.awaitTerminationMillisWhenShutdown ?? 30_000,
      0,
      2 ** 31 - 1,
    ),
  };
}
