/**
 * @module What orderly consumers did, as the orderly tests record it: each listener call's entry and
 * exit per queue (a second consumer entering a queue another one is inside is a violation, recorded at
 * once), and the sequence numbers each key's messages were processed in. Bodies are `<key>:<seq>`.
 *
 * @example
 * const record = new OrderlyRecord();
 * consumer.registerMessageListenerOrderly(record.listener("A"));
 * await waitUntil(() => record.processed === 600, "all processed");
 * assert.deepEqual(record.violations, []);
 */
import type { ConsumeOrderlyContext, ConsumeOrderlyStatus } from "../../lib/client/consumer/consume-orderly.js";
import type { MessageExt } from "../../lib/client/message.js";

export class OrderlyRecord {
  /** Queue key to the consumer inside it now. */
  readonly #inside = new Map<string, string>();
  readonly violations: string[] = [];
  /** Key to the sequence numbers processed, in processing order. */
  readonly byKey = new Map<string, number[]>();
  /** Consumer name to the number of messages it processed. */
  readonly byConsumer = new Map<string, number>();
  /** Batch sizes seen. */
  readonly batchSizes = new Set<number>();
  processed = 0;

  listener(name: string, listenerMs = 2) {
    return async (msgs: MessageExt[], context: ConsumeOrderlyContext): Promise<ConsumeOrderlyStatus> => {
      const queue = context.messageQueue.key();
      const other = this.#inside.get(queue);
      if (other !== undefined) this.violations.push(`${name} entered ${queue} while ${other} was inside`);
      this.#inside.set(queue, name);
      this.batchSizes.add(msgs.length);
      await new Promise((resolve) => setTimeout(resolve, listenerMs));
      for (const m of msgs) {
        const [key, seq] = m.bodyText.split(":");
        const list = this.byKey.get(key ?? "") ?? [];
        list.push(Number(seq));
        this.byKey.set(key ?? "", list);
      }
      this.processed += msgs.length;
      this.byConsumer.set(name, (this.byConsumer.get(name) ?? 0) + msgs.length);
      if (this.#inside.get(queue) === name) this.#inside.delete(queue);
      return "SUCCESS";
    };
  }

  /** Keys whose processing was not exactly 0, 1, ..., n-1. */
  outOfOrder(keys: readonly string[], n: number): string[] {
    const expected = Array.from({ length: n }, (_, i) => i).join(",");
    return keys.filter((k) => (this.byKey.get(k) ?? []).join(",") !== expected);
  }
}
