/**
 * @module The deployment's broker settings, validated by zod: one schema that the SST stack, the Lambda
 * handlers and the local server all read, so a stage behaves the same everywhere.
 */
import { z } from "zod";
import { DEFAULT_MESSAGE_DELAY_LEVEL, parseDelayLevels } from "../core/delay-levels.js";
import { isNimbusError } from "../core/errors.js";
import { DEFAULT_PERM } from "../core/perm-name.js";
import { TARGET_NETWORKS, type TargetNetworks } from "../core/target-address.js";
import { MASTER_ID } from "../core/topology.js";
import { DEFAULT_AUTO_CREATE_QUEUE_NUMS, MAX_QUEUE_NUMS } from "../protocol/bounds.js";

const brokerName = z.string().regex(/^[%|a-zA-Z0-9_-]{1,127}$/);

/** The default deployment: two masters, as RocketMQ's quick start runs broker-a and broker-b. */
export const TWO_MASTERS = [
  { brokerName: "broker-a", brokerId: MASTER_ID, perm: DEFAULT_PERM },
  { brokerName: "broker-b", brokerId: MASTER_ID, perm: DEFAULT_PERM },
];

export const NimbusConfigSchema = z
  .object({
    /** RocketMQ's cluster name of every broker. */
    cluster: brokerName.default("DefaultCluster"),
    /** Named storage shards; brokerId 0 is the master (takes writes), other ids are read-only slaves. */
    brokers: z
      .array(
        z
          .object({
            brokerName,
            brokerId: z.number().int().min(0).default(MASTER_ID),
            /** RocketMQ's brokerPermission (6 = read+write, 4 = read-only). */
            perm: z.number().int().min(0).max(15).default(DEFAULT_PERM),
          })
          .strict(),
      )
      .min(1)
      .default(TWO_MASTERS),
    /** RocketMQ's autoCreateTopicEnable: sending to an unknown topic creates it. */
    autoCreateTopic: z.boolean().default(true),
    /** Queues per broker of an auto-created topic. */
    defaultTopicQueueNums: z.number().int().min(1).max(MAX_QUEUE_NUMS).default(DEFAULT_AUTO_CREATE_QUEUE_NUMS),
    /** Batches up to this size are stored inline in DynamoDB, larger ones in S3 (docs/queue-log.md). */
    inlineThresholdBytes: z
      .number()
      .int()
      .min(0)
      .max(350 * 1024)
      .default(8 * 1024),
    /**
     * Hot queues: topics whose new queues spread their index over this many DynamoDB partition keys (2..64), past one
     * key's 1,000 write units/s (docs/queue-log.md, "Hot queues"). Read when a queue is created; existing queues
     * keep their layout. Every process of a deployment must agree.
     */
    hotTopics: z
      .record(z.string().regex(/^[%|a-zA-Z0-9_-]{1,127}$/), z.number().int().min(2).max(64))
      .refine((r) => Object.keys(r).length <= 1024, "at most 1024 hot topics")
      .default({}),
    /**
     * How the DynamoDB client retries a throttled request: full jitter over `baseMs` × 2^retry, `maxAttempts`
     * attempts, at most 2 s waited in all. Absent: the adapter's default, `{ baseMs: 50, maxAttempts: 6 }` (a key's
     * units refill within milliseconds; the SDK's own 1 s base added ~0.5 s to every throttled append).
     */
    dynamoThrottleRetry: z
      .object({ baseMs: z.number().int().min(5).max(1000), maxAttempts: z.number().int().min(2).max(10) })
      .strict()
      .optional(),
    /** How long messages are kept (RocketMQ's fileReservedTime, 72 h). At least 1 h (the chain rule). */
    retentionHours: z
      .number()
      .min(1)
      .max(24 * 3650)
      .default(72),
    /** How long an API instance trusts a cached topic route. */
    routeCacheMs: z.number().int().min(0).max(60_000).default(3000),
    /**
     * How long an orderly consumer's queue lock lasts without renewal (RocketMQ's rebalanceLockMaxLiveTime,
     * 60 s); consumers renew every 20 s by default.
     */
    queueLockLeaseMs: z.number().int().min(100).max(3_600_000).default(60_000),
    /** The clock skew between API instances that queue locks tolerate: another client waits this long past a lease's end. */
    queueLockSkewMarginMs: z.number().int().min(0).max(600_000).default(5000),
    /** RocketMQ's transactionTimeOut: a half message not ended this long after it was stored is checked. */
    transactionTimeoutMs: z.number().int().min(0).max(86_400_000).default(6000),
    /**
     * RocketMQ's transactionCheckInterval: time between checks of one transaction. On AWS the checks run on
     * a one-minute schedule, so anything under 60 s acts as 60 s there.
     */
    transactionCheckIntervalMs: z.number().int().min(100).max(86_400_000).default(60_000),
    /** RocketMQ's transactionCheckMax: checks before a half message is discarded. */
    transactionCheckMax: z.number().int().min(1).max(1000).default(15),
    /** RocketMQ's messageDelayLevel: the delay of each level, level 1 first (docs/retry-and-delay.md). */
    messageDelayLevel: z
      .string()
      .superRefine((text, ctx) => {
        try {
          parseDelayLevels(text);
        } catch (err) {
          if (!isNimbusError(err)) throw err;
          ctx.addIssue({ code: "custom", message: err.message });
        }
      })
      .default(DEFAULT_MESSAGE_DELAY_LEVEL),
    /** The furthest a timer message may be delivered ahead (RocketMQ's timerMaxDelaySec; its default is 3 days). */
    timerMaxDelaySec: z
      .number()
      .int()
      .min(60)
      .max(365 * 86_400)
      .default(7 * 86_400),
    /**
     * How often one API process looks for due delayed messages while it serves requests (sends and pulls
     * move them), and how often the local broker's timer job runs.
     */
    timerSweepIntervalMs: z.number().int().min(20).max(60_000).default(500),
    /** POP: deliveries of a message before it goes to %DLQ%<group> (RocketMQ 5: 1 + 16 retries). */
    popMaxDeliveryAttempts: z.number().int().min(1).max(1000).default(17),
    /** POP: consumer groups whose receives are FIFO (one message of each message group in flight). */
    popFifoGroups: z
      .array(z.string().regex(/^[%|a-zA-Z0-9_-]{1,255}$/))
      .max(1000)
      .default([]),
    /**
     * POP: the longest a receive waits for a message. On Lambda a held receive is billed for its wait and is
     * woken only by sends its own container serves (docs/pop.md): keep it short there.
     */
    popMaxLongPollMs: z.number().int().min(0).max(20_000).default(20_000),
    /**
     * Lag samples: at most one per consumer group per this (the sampling job's period in `nimbus dev`; on AWS
     * the schedule runs every minute). A group keeps 1440 samples: a day at the default.
     */
    lagSampleIntervalMs: z.number().int().min(1000).max(3_600_000).default(60_000),
    /**
     * What addresses subscriptions' HTTPS targets may reach: `public` only, also `private` networks, or also
     * `loopback` (lib/core/target-address.ts). Unset: `public` on AWS stages (on Lambda, loopback is the runtime
     * API), `loopback` in `nimbus dev` (local webhooks). `loopback` is refused on AWS (`awsTargetNetworks`).
     * Link-local addresses (metadata services) never.
     */
    subscriptionTargetNetworks: z.enum(TARGET_NETWORKS).optional(),
  })
  .strict()
  // A half message must outlive its last check (retention trims half queues like any queue).
  .refine(
    (c) =>
      c.transactionTimeoutMs + c.transactionCheckMax * c.transactionCheckIntervalMs < (c.retentionHours * 3600_000) / 2,
    "transactionTimeoutMs + transactionCheckMax × transactionCheckIntervalMs must be under half the retention",
  );

export type NimbusConfig = z.output<typeof NimbusConfigSchema>;
export type NimbusConfigInput = z.input<typeof NimbusConfigSchema>;

export function parseNimbusConfig(input: unknown): NimbusConfig {
  return NimbusConfigSchema.parse(input ?? {});
}

/** Why a config cannot run on AWS: its subscription targets may reach loopback (`nimbus dev`'s setting only). */
export const LOOPBACK_TARGETS_ON_AWS =
  'subscriptionTargetNetworks "loopback" is for nimbus dev only: on Lambda, loopback is the runtime API';

/**
 * What an AWS stage's subscription targets may reach: its setting, `public` when unset. `loopback` throws
 * (LOOPBACK_TARGETS_ON_AWS): the stage settings refuse it at deploy, and a function given it anyway stops at start.
 */
export function awsTargetNetworks(config: NimbusConfig): TargetNetworks {
  if (config.subscriptionTargetNetworks === "loopback") throw new Error(`NIMBUS_CONFIG: ${LOOPBACK_TARGETS_ON_AWS}`);
  return config.subscriptionTargetNetworks ?? "public";
}

/** The AWS adapter's retry options the config sets (`dynamoThrottleRetry`); none: the adapter's defaults. */
export function awsRetryOptions(config: NimbusConfig): {
  maxAttempts?: number;
  retryBackoff?: { throttlingBaseMs: number };
} {
  const retry = config.dynamoThrottleRetry;
  return retry === undefined
    ? {}
    : { maxAttempts: retry.maxAttempts, retryBackoff: { throttlingBaseMs: retry.baseMs } };
}
