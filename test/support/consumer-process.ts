/**
 * @module What the consumer processes the tests fork share: their arguments (API url, group, topic), the
 * channel to the parent (a process whose parent is gone exits too), their push consumer's options, and the
 * orderly lock tests' short timings.
 */
import type { PushConsumerOptions } from "../../lib/client/consumer/consumer-options.js";
import { TEST_TIMEOUT_MS } from "./timeouts.js";

/** The process's `[url, group, topic]` arguments and its `send` to the parent; throws with the usage otherwise. */
export function consumerProcessArgs(script: string): {
  url: string;
  group: string;
  topic: string;
  send: (message: unknown, sent?: () => void) => void;
} {
  const [url, group, topic] = process.argv.slice(2);
  if (!url || !group || !topic || !process.send) throw new Error(`usage: fork(${script}, [url, group, topic])`);
  const send = process.send.bind(process);
  // The parent gone (a failed test), this process goes too.
  process.on("disconnect", () => process.exit(0));
  return { url, group, topic, send: (message, sent) => void send(message, undefined, undefined, sent) };
}

/**
 * A forked push consumer's options: the group and API of its arguments, from the first offset, the tests'
 * request timeout, errors left to the parent (it watches what the process reports), and `settings`.
 */
export function forkedConsumerOptions(
  args: { url: string; group: string },
  settings: Partial<PushConsumerOptions>,
): PushConsumerOptions {
  return {
    consumerGroup: args.group,
    endpoints: args.url,
    timeoutMs: TEST_TIMEOUT_MS,
    consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
    onError: () => undefined,
    ...settings,
  };
}

/**
 * The orderly lock tests' consumer timings: membership read every 200 ms, locks renewed and heartbeats every
 * 300 ms (consumerStatus is fresh), quick idle pulls. A polling client: the tests model a heartbeat expiry with
 * an HTTP unregister, and a paused process keeps its push-channel socket (docs/push-channel.md).
 */
export const ORDERLY_TEST_TIMINGS = {
  membershipPollInterval: 200,
  rebalanceInterval: 1000,
  persistConsumerOffsetInterval: 200,
  heartbeatInterval: 300,
  lockRenewIntervalMillis: 300,
  pullIdleBackoffMillis: 20,
  pullIdleBackoffMaxMillis: 200,
  pushChannel: false,
} satisfies Partial<PushConsumerOptions>;
