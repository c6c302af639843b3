/**
 * @module Client-side batching (as RocketMQ 5's producer `autoBatch`): single-message sends to one topic
 * that arrive within `lingerMs` go out as one `/send` request, up to `maxMessages` messages and
 * `maxBytes` bytes. The broker stores a batch in one queue at consecutive offsets, so each caller gets
 * its own `SendResult`: the batch's queue, `queueOffset + index` and its own message id. A failed batch
 * rejects every caller in it.
 *
 * @example
 * const batcher = new SendBatcher({ lingerMs: 5 }, (topic, messages, timeoutMs) => sendOnce(topic, messages, timeoutMs));
 * const [a, b] = await Promise.all([batcher.add("T", m1, 3000), batcher.add("T", m2, 3000)]); // one request
 * await batcher.close(); // flushes what waits
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MAX_BATCH_MESSAGES } from "../../protocol/index.js";
import { type SendResult, toMessageQueue } from "../message.js";
import type { SendMessage, SendResponse } from "../transport/index.js";

export interface BatchingOptions {
  /** How long the first message of a batch waits for others. Default 10 ms (RocketMQ's batchMaxDelayMs). */
  lingerMs?: number;
  /** A batch goes out once its messages reach this many bytes. Default 32 KiB (RocketMQ's batchMaxBytes). */
  maxBytes?: number;
  /** A batch goes out once it holds this many messages. Default 128; at most 1024 (the broker's limit). */
  maxMessages?: number;
}

/** Sends one batch of one topic (with the producer's queue choice and retries). */
export type BatchSendFn = (topic: string, messages: SendMessage[], timeoutMs: number) => Promise<SendResponse>;

interface Waiter {
  message: SendMessage;
  deadline: number;
  resolve(result: SendResult): void;
  reject(err: unknown): void;
}

interface PendingBatch {
  waiters: Waiter[];
  bytes: number;
  timer: NodeJS.Timeout;
}

/**
 * The bytes a message adds to a batch: body, tags, keys and properties, plus a few bytes of framing
 * (an estimate of the encoded size; base64 on the wire adds a third to the body).
 */
export function messageBytes(m: SendMessage): number {
  const utf8 = (s: string) => Buffer.byteLength(s, "utf8");
  let n = m.body.byteLength + utf8(m.tags ?? "") + 24;
  for (const k of m.keys ?? []) n += utf8(k) + 1;
  for (const [k, v] of Object.entries(m.properties ?? {})) n += utf8(k) + utf8(v) + 2;
  return n;
}

/** The result of message `index` of a sent batch. */
export function resultAt(res: SendResponse, index: number): SendResult {
  const msgId = res.msgIds[index] ?? "";
  const deliverTimeMs = res.deliverTimeMs?.[index];
  return {
    sendStatus: res.sendStatus,
    msgId,
    msgIds: [msgId],
    messageQueue: toMessageQueue(res.messageQueue),
    // A delayed message has no offset until it is due (the broker answers 0).
    queueOffset: deliverTimeMs === undefined ? res.queueOffset + index : res.queueOffset,
    ...(deliverTimeMs === undefined ? {} : { deliverTimeMs }),
  };
}

export class SendBatcher {
  readonly lingerMs: number;
  readonly maxBytes: number;
  readonly maxMessages: number;
  readonly #send: BatchSendFn;
  readonly #now: () => number;
  readonly #pending = new Map<string, PendingBatch>();
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;

  constructor(options: BatchingOptions, send: BatchSendFn, now: () => number = Date.now) {
    this.lingerMs = positive(options.lingerMs ?? 10, "lingerMs", true);
    this.maxBytes = positive(options.maxBytes ?? 32 * 1024, "maxBytes");
    this.maxMessages = Math.min(MAX_BATCH_MESSAGES, positive(options.maxMessages ?? 128, "maxMessages"));
    this.#send = send;
    this.#now = now;
  }

  /** Queues one message; resolves with its own result once its batch is stored. */
  add(topic: string, message: SendMessage, timeoutMs: number): Promise<SendResult> {
    const bytes = messageBytes(message);
    const open = this.#pending.get(topic);
    if (open && (open.waiters.length + 1 > this.maxMessages || open.bytes + bytes > this.maxBytes)) {
      this.#flushTopic(topic);
    }
    let batch = this.#pending.get(topic);
    if (!batch) {
      // Not unref()ed: the timer stands for sends that callers await; close() clears it.
      const timer = setTimeout(() => this.#flushTopic(topic), this.lingerMs);
      batch = { waiters: [], bytes: 0, timer };
      this.#pending.set(topic, batch);
    }
    const promise = new Promise<SendResult>((resolve, reject) => {
      batch.waiters.push({ message, deadline: this.#now() + timeoutMs, resolve, reject });
    });
    batch.bytes += bytes;
    if (this.#closed || batch.waiters.length >= this.maxMessages || batch.bytes >= this.maxBytes) {
      this.#flushTopic(topic);
    }
    return promise;
  }

  /** Sends every waiting batch now and waits for their answers; later adds go out at once, unbatched. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const topic of [...this.#pending.keys()]) this.#flushTopic(topic);
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #flushTopic(topic: string): void {
    const batch = this.#pending.get(topic);
    if (!batch) return;
    this.#pending.delete(topic);
    clearTimeout(batch.timer);
    const { waiters } = batch;
    // The batch lives as long as its most impatient caller allows.
    const timeoutMs = Math.min(...waiters.map((w) => w.deadline)) - this.#now();
    const job = (async () => {
      try {
        if (timeoutMs <= 0) {
          throw new NimbusError(ErrorCode.SYSTEM_BUSY, `batch send to ${topic} timed out before it was sent`);
        }
        const res = await this.#send(
          topic,
          waiters.map((w) => w.message),
          timeoutMs,
        );
        for (const [i, w] of waiters.entries()) w.resolve(resultAt(res, i));
      } catch (err) {
        for (const w of waiters) w.reject(err);
      }
    })();
    this.#inFlight.add(job);
    void job.finally(() => this.#inFlight.delete(job));
  }
}

function positive(value: number, name: string, zeroOk = false): number {
  if (!Number.isInteger(value) || value < (zeroOk ? 0 : 1)) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `batching.${name} must be an integer ≥ ${zeroOk ? 0 : 1}`);
  }
  return value;
}
