/**
 * @module Acks of one checkpoint, written together. RocketMQ 5's clients ack one message per call, and a consumer
 * acks a received batch with its calls in flight together: answered one by one, each call would read the
 * checkpoint and write an ack item of its own (32 writes for a batch of 32, and reads that grow with every item).
 * Here the calls for one checkpoint that arrive in the same event-loop turn, or while the checkpoint's previous
 * acks are being written, are checked against one read and written as one ack item; each call still gets its own
 * answer for each of its handles. A lone ack waits for nothing but the end of its turn (`setImmediate`).
 */
import type { CheckpointState, CheckpointStore } from "./checkpoints.js";
import type { ReceiptHandle } from "./receipt-handle.js";

/** What an ack answers for one receipt handle. */
export type AckCode = "OK" | "INVALID_RECEIPT_HANDLE";

/** Handles checked and written together at most (a checkpoint spans at most 32 offsets; duplicates fold). */
const MAX_HANDLES_PER_WRITE = 256;

interface WaitingAck {
  handle: ReceiptHandle;
  settle: (code: AckCode) => void;
  fail: (err: unknown) => void;
}

/** One checkpoint's acks waiting to be written, and whether its writer is running. */
interface AckLine {
  pk: string;
  start: number;
  waiting: WaitingAck[];
}

export class CheckpointAcks {
  readonly #lines = new Map<string, AckLine>();
  /** Ack items written (each for one or more handles): the path a test asserts on. */
  writes = 0;

  constructor(
    private readonly store: CheckpointStore,
    private readonly now: () => number,
    /** The messages now acked in this checkpoint (the receive cache follows). */
    private readonly acked: (pk: string, start: number, offsets: readonly number[]) => void,
  ) {}

  /** Acks `handles` of the checkpoint `start` of queue `pk`: a code per handle, in order. */
  ack(pk: string, start: number, handles: readonly ReceiptHandle[]): Promise<AckCode[]> {
    const key = `${pk}\n${start}`;
    let line = this.#lines.get(key);
    if (line === undefined) {
      line = { pk, start, waiting: [] };
      this.#lines.set(key, line);
      const started = line;
      setImmediate(() => void this.#write(key, started));
    }
    const waiting = line.waiting;
    return Promise.all(
      handles.map(
        (handle) =>
          new Promise<AckCode>((settle, fail) => {
            waiting.push({ handle, settle, fail });
          }),
      ),
    );
  }

  /** Writes the line's waiting acks, then those that came meanwhile, until none wait; then the line ends. */
  async #write(key: string, line: AckLine): Promise<void> {
    while (line.waiting.length > 0) {
      const batch = line.waiting.splice(0, MAX_HANDLES_PER_WRITE);
      try {
        const codes = await this.#writeBatch(line, batch);
        for (const [i, w] of batch.entries()) w.settle(codes[i] ?? "INVALID_RECEIPT_HANDLE");
      } catch (err) {
        for (const w of batch) w.fail(err);
      }
    }
    this.#lines.delete(key);
  }

  async #writeBatch(line: AckLine, batch: readonly WaitingAck[]): Promise<AckCode[]> {
    const ck = await this.store.read(line.pk, line.start);
    const now = this.now();
    const acks = new Map<number, number>();
    const codes = batch.map(({ handle }): AckCode => {
      if (ck === undefined || !isCurrent(ck, handle, now)) return "INVALID_RECEIPT_HANDLE";
      acks.set(handle.offset, handle.round);
      return "OK";
    });
    if (acks.size > 0) {
      await this.store.ack(
        line.pk,
        line.start,
        [...acks].map(([offset, round]) => ({ offset, round })),
        now,
      );
      this.writes++;
      this.acked(line.pk, line.start, [...acks.keys()]);
    }
    return codes;
  }
}

/** The handle names the message's current round of this checkpoint, before its invisible time ended, unacked. */
export function isCurrent(ck: CheckpointState, h: ReceiptHandle, now: number): boolean {
  const state = ck.offsets.get(h.offset);
  return (
    ck.head.nonce === h.nonce &&
    state !== undefined &&
    state.round === h.round &&
    !state.acked &&
    now < state.invisibleUntil
  );
}
