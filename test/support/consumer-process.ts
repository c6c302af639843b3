/**
 * @module What the consumer processes the tests fork share: their arguments (API url, group, topic), the
 * channel to the parent (a process whose parent is gone exits too), and the orderly lock tests' short timings.
 */
import type { PushConsumerOptions } from "../../lib/client/consumer/consumer-options.js";

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
