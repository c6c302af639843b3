/**
 * @module When a message is due: RocketMQ's delay levels (`DELAY`, level 1..n of the deployment's
 * `messageDelayLevel`) and RocketMQ 5's timer properties (`TIMER_DELIVER_MS`, an absolute time;
 * `TIMER_DELAY_SEC` / `TIMER_DELAY_MS`, relative). A message carries at most one of them. A deliver time
 * up to `PAST_TOLERANCE_MS` in the past is delivered at once; further in the past, or more than the
 * deployment's `timerMaxDelaySec` ahead, is refused (PARAMETER_ILLEGAL) before anything is written.
 */
import { TIMER_PROPERTIES } from "../../core/delay-levels.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MessageConst, type MessageRecord } from "../../core/message.js";
import type { SendResponse } from "../../protocol/index.js";
import type { QueueRef } from "../queue-log/index.js";
import type { TimerStore } from "./timer-store.js";

/** A deliver time this far in the past is delivered now (clocks differ); further back it is refused. */
export const PAST_TOLERANCE_MS = 60_000;

const illegal = (message: string) => new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);

function integerProperty(record: MessageRecord, name: string, index: number): number {
  const text = record.properties[name] as string;
  if (!/^-?\d{1,16}$/.test(text)) throw illegal(`message ${index}: ${name} must be a whole number, got "${text}"`);
  return Number(text);
}

export class DelayedDelivery {
  constructor(
    /** The delay of each level in ms, level 1 first. */
    readonly levels: readonly number[],
    readonly maxDelayMs: number,
    readonly timers: TimerStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** The time `delayMs` from now. */
  dueAfter(delayMs: number): number {
    return this.now() + delayMs;
  }

  /** The delay of `level` (1..levels.length) in ms. */
  levelDelay(level: number): number {
    const delay = this.levels[level - 1];
    if (!Number.isInteger(level) || delay === undefined) {
      throw illegal(`delay level ${level} is out of range: this deployment has levels 1 to ${this.levels.length}`);
    }
    return delay;
  }

  /**
   * When `record` is due, or undefined to deliver it now. Throws PARAMETER_ILLEGAL on a bad level or time
   * and MESSAGE_BODY_TOO_LARGE on a delayed message too large to wait in the timer store.
   */
  dueAt(record: MessageRecord, index: number): number | undefined {
    const given = TIMER_PROPERTIES.filter((p) => record.properties[p] !== undefined);
    if (given.length === 0) return undefined;
    if (given.length > 1) throw illegal(`message ${index}: ${given.join(" and ")} cannot both be set`);
    const now = this.now();
    const [property] = given as [(typeof TIMER_PROPERTIES)[number]];
    const value = integerProperty(record, property, index);
    let dueAt: number;
    switch (property) {
      case MessageConst.DELAY:
        if (value === 0) return undefined;
        try {
          dueAt = now + this.levelDelay(value);
        } catch (err) {
          throw illegal(`message ${index}: ${(err as Error).message}`);
        }
        break;
      case MessageConst.TIMER_DELIVER_MS:
        if (value < now - PAST_TOLERANCE_MS) {
          throw illegal(
            `message ${index}: ${property} ${value} is ${now - value} ms in the past (at most ${PAST_TOLERANCE_MS} ms is delivered now)`,
          );
        }
        dueAt = value;
        break;
      default: {
        if (value < 0) throw illegal(`message ${index}: ${property} must not be negative`);
        dueAt = now + (property === MessageConst.TIMER_DELAY_SEC ? value * 1000 : value);
      }
    }
    if (dueAt - now > this.maxDelayMs) {
      throw illegal(
        `message ${index}: the deliver time is ${dueAt - now} ms ahead, beyond this deployment's maximum of ${this.maxDelayMs} ms (timerMaxDelaySec)`,
      );
    }
    if (dueAt <= now) return undefined;
    this.timers.checkSize(record, index);
    return dueAt;
  }

  /** Stores a send's delayed messages in the timer store; the answer names the queue they will go to. */
  async schedule(queue: QueueRef, records: MessageRecord[], dueAts: number[]): Promise<SendResponse> {
    await this.timers.schedule(records.map((record, i) => ({ queue, record, dueAt: dueAts[i] as number })));
    return {
      sendStatus: "SEND_OK",
      messageQueue: queue,
      queueOffset: 0,
      msgIds: records.map((r) => r.properties[MessageConst.UNIQ_KEY] as string),
      storeTimestamp: this.now(),
      deliverTimeMs: dueAts,
    };
  }
}
