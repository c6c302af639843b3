/** @module The message the embedded store's in-process probes (page-size.ts, store-append.ts) append: 1 KiB, a tag, a key. */
import type { MessageRecord } from "../../lib/core/message.js";

const body = new Uint8Array(1024).fill(97);

/** Message `i` of a probe: its key and UNIQ_KEY numbered, its body the same 1 KiB for all. */
export function storeProbeMessage(i: number): MessageRecord {
  return {
    bornTimestamp: Date.now(),
    flag: 0,
    tags: "TagA",
    keys: [`key-${i}`],
    properties: { UNIQ_KEY: `uniq-${i}` },
    body,
    reconsumeTimes: 0,
  };
}
