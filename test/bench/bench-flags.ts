/**
 * @module The flags of `npm run bench` (parsed by run.ts; each suite's meaning in help.ts) and the check every
 * numeric flag goes through.
 */
import type { ParseArgsConfig } from "node:util";

/** Every flag the bench takes, with its default where one applies to all suites. */
export const BENCH_FLAGS = {
  quick: { type: "boolean", default: false },
  help: { type: "boolean", default: false },
  mode: { type: "string", default: "both" },
  seconds: { type: "string" },
  "max-messages": { type: "string" },
  batches: { type: "string", default: "1,32,256" },
  polls: { type: "string" },
  clients: { type: "string" },
  flush: { type: "string" },
  keys: { type: "boolean", default: false },
  "key-index": { type: "string", default: "on" },
  push: { type: "boolean", default: false },
  "push-mode": { type: "string", default: "both" },
  rates: { type: "string", default: "1,100,2000" },
  "rate-seconds": { type: "string" },
  "idle-seconds": { type: "string" },
  "idle-rounds": { type: "string" },
  "s3-put": { type: "string", default: "30/100" },
  "s3-get": { type: "string", default: "15/60" },
  dynamo: { type: "string", default: "5/15" },
  "idle-cost-period": { type: "string" },
  "idle-cost-periods": { type: "string" },
  "rates-channel": { type: "string", default: "on" },
  suite: { type: "string", default: "data" },
  url: { type: "string" },
  rate: { type: "string" },
  "e2e-seconds": { type: "string" },
  backends: { type: "string", default: "dynamodb-local,dynalite" },
  writers: { type: "string", default: "1,2,4,8,16,32,64" },
  shapes: { type: "string", default: "hot,topic" },
  stretch: { type: "string" },
  via: { type: "string", default: "queue-log" },
  senders: { type: "string", default: "64" },
  connections: { type: "string", default: "256" },
  factors: { type: "string", default: "2" },
  "health-interval": { type: "string", default: "20" },
  target: { type: "string", default: "https" },
  rounds: { type: "string" },
  queues: { type: "string" },
  phases: { type: "string", default: "sync,async,consume" },
  producers: { type: "string" },
  workers: { type: "string" },
  "key-limits": { type: "string", default: "on" },
  "index-keys": { type: "string", default: "1" },
  batch: { type: "string", default: "1" },
  groups: { type: "string", default: "0" },
  "warm-appends": { type: "string", default: "0" },
  "hedge-budget": { type: "string" },
  "throttle-base-ms": { type: "string" },
  "max-attempts": { type: "string" },
  brokers: { type: "string", default: "rocketmq,nimbus" },
  protocols: { type: "string", default: "grpc,remoting" },
  protocol: { type: "string", default: "grpc" },
  "plain-clients": { type: "string", default: "fetch,urllib" },
  factor: { type: "string" },
  "overload-client": { type: "string", default: "fetch" },
  "go-pool": { type: "string", default: "0" },
  auth: { type: "boolean", default: false },
  "no-jit-settle": { type: "boolean", default: false },
  warmup: { type: "string" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

/** `raw` as a share from 0 to 1; anything else throws naming the flag. */
export const share = (name: string, raw: string): number => {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1)
    throw new Error(`--${name} must be from 0 to 1, got ${raw}`);
  return n;
};

/**
 * `raw` as a whole number from 0 to 2^31-1 (a Java int: the rocketmq suite's client reads some), or `fallback` when
 * the flag was not given; anything else ("2.5", "", "0x10") throws naming the flag.
 */
export const wholeNumber = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d{1,10}$/.test(raw) || n > 2 ** 31 - 1)
    throw new Error(`--${name} must be a whole number up to 2147483647, got ${raw}`);
  return n;
};

/** `raw` as a positive number, or `fallback` when the flag was not given; anything else throws naming the flag. */
export const positive = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`);
  return n;
};
