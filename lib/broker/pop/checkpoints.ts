/**
 * @module The POP state of one (group, queue): checkpoints, as RocketMQ 5's CK records, on nothing but the
 * `Table` port. Partition `pop:<G>:<T>:<broker>:<queueId>` holds:
 *
 * - a **checkpoint** per receive from this queue, sort key the zero-padded start offset: the queue range
 *   `[start, end)` one receive took, the offsets it handed out (those its filter matched), their invisible
 *   time and a random nonce. Checkpoints chain: each starts where the previous ended, and a receive claims
 *   its range by creating the item on condition "no item has this key", so of receivers racing for the
 *   same offsets one wins (the group's POP offset is the newest checkpoint's end; no offset item exists);
 * - **rounds** (`<start>#r<n>`): a redelivery (the offsets whose invisible time ended, attempt + 1), a
 *   change of invisible time (one offset), a move to the dead-letter queue; created on the same condition,
 *   so a round has one author and an offset's current round is the newest that names it;
 * - **acks** (`<start>#a<nonce>`): the offsets one ack call acked, each with the round it acked; written
 *   unconditionally (its nonce makes the key its writer's own). An offset is done when an ack names its
 *   current round;
 * - `lowwater`: a start at or below the oldest checkpoint that is not done (a hint: stale is only slower).
 *
 * A receive of a batch writes one item, an ack call one item per checkpoint it touches: nothing per message.
 */
import { randomBytes } from "node:crypto";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import type { QueueRef } from "../queue-log/index.js";

const LOW_WATER_SK = "lowwater";
/** Every checkpoint, round and ack key sorts at or before this (they start with digits). */
const DIGITS_END = "9~";
/** Items read per query page of a checkpoint or a window. */
const PAGE = 64;
/** The most items one window scan reads (the rest is scanned by the next). */
export const MAX_WINDOW_ITEMS = 1024;

export const popPk = (group: string, q: QueueRef): string => `pop:${group}:${q.topic}:${q.brokerName}:${q.queueId}`;
const startKey = (start: number): string => String(start).padStart(16, "0");
/** Keys strictly above this are the checkpoint at `start` and everything after it. */
const before = (start: number): string => (start === 0 ? "/" : `${startKey(start - 1)}~`); // "/" sorts just before "0"
const roundKey = (start: number, round: number): string => `${startKey(start)}#r${String(round).padStart(5, "0")}`;

export interface Checkpoint {
  start: number;
  end: number;
  /** The offsets handed out (the others in the range did not match the filter: done at once). */
  offsets: number[];
  invisibleUntil: number;
  nonce: string;
}

export type RoundKind = "redeliver" | "change" | "dlq";

export interface OffsetState {
  offset: number;
  /** 1 for the checkpoint's own delivery, then the round that last named it. */
  round: number;
  deliveryAttempt: number;
  invisibleUntil: number;
  kind: RoundKind | "receive";
  acked: boolean;
}

export interface CheckpointState {
  head: Checkpoint;
  maxRound: number;
  offsets: Map<number, OffsetState>;
}

export const isDone = (ck: CheckpointState): boolean => [...ck.offsets.values()].every((o) => o.acked);

export function newNonce(): string {
  return randomBytes(8).toString("hex");
}

export class CheckpointStore {
  constructor(
    private readonly table: Table,
    private readonly retentionMs: number,
  ) {}

  /**
   * Creates a checkpoint. Condition `attribute_not_exists(pk)`: of receivers claiming the same start offset
   * exactly one writes; a loser learns the winner's end (the stored item comes back with the failure).
   */
  async create(
    pk: string,
    head: Checkpoint,
    now: number,
  ): Promise<{ created: true } | { created: false; end: number }> {
    try {
      await this.table.put(
        {
          pk,
          sk: startKey(head.start),
          start: head.start,
          end: head.end,
          offsets: head.offsets,
          invisibleUntil: head.invisibleUntil,
          nonce: head.nonce,
          expiresAt: this.#expiry(Math.max(now, head.invisibleUntil)),
        },
        { condition: { exists: false }, returnExistingOnFailure: true },
      );
      return { created: true };
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      return { created: false, end: err.existing === undefined ? head.start : Number(err.existing.end) };
    }
  }

  /** The newest checkpoint's end (the group's POP offset of this queue), undefined for a new group. */
  async newestEnd(pk: string): Promise<number | undefined> {
    const page = await this.table.query(pk, { sk: { lte: DIGITS_END }, descending: true, limit: 8, consistent: true });
    const first = page.items[0];
    if (first === undefined) return undefined;
    const head = page.items.find((i) => !String(i.sk).includes("#"));
    if (head !== undefined && String(head.sk) === String(first.sk).split("#")[0]) return Number(head.end);
    // The newest checkpoint has more than a page of rounds and acks: read it by its key.
    const item = await this.table.get({ pk, sk: String(first.sk).split("#")[0] ?? "" }, { consistent: true });
    return item === undefined ? undefined : Number(item.end);
  }

  /** The checkpoint at `start` with its rounds and acks (one query in the usual case); undefined if none. */
  async read(pk: string, start: number): Promise<CheckpointState | undefined> {
    const own = startKey(start);
    const items: Item[] = [];
    let startAfter: string | number | undefined;
    for (;;) {
      const page = await this.table.query(pk, { sk: { gt: before(start) }, limit: PAGE, consistent: true, startAfter });
      const mine = page.items.filter((i) => String(i.sk) === own || String(i.sk).startsWith(`${own}#`));
      items.push(...mine);
      if (mine.length < page.items.length || page.lastSk === undefined || items.length >= MAX_WINDOW_ITEMS) break;
      startAfter = page.lastSk;
    }
    return stateOf(items)[0];
  }

  /** The checkpoints from `from` on, with their rounds and acks, up to MAX_WINDOW_ITEMS items. */
  async window(pk: string, from: number): Promise<CheckpointState[]> {
    const items: Item[] = [];
    let startAfter: string | number | undefined;
    do {
      const page = await this.table.query(pk, { sk: { gt: before(from) }, limit: PAGE, consistent: true, startAfter });
      items.push(...page.items.filter((i) => i.sk !== LOW_WATER_SK));
      startAfter = page.lastSk;
    } while (startAfter !== undefined && items.length < MAX_WINDOW_ITEMS);
    const states = stateOf(items);
    // The last checkpoint may be cut short by the bound: leave it to the next scan.
    return items.length >= MAX_WINDOW_ITEMS ? states.slice(0, -1) : states;
  }

  /**
   * Creates round `round` of the checkpoint at `start`. Condition `attribute_not_exists(pk)`: a round has
   * one author, so two processes never redeliver (or change) the same offsets as the same round.
   */
  async createRound(
    pk: string,
    start: number,
    round: number,
    entries: { offset: number; deliveryAttempt: number }[],
    invisibleUntil: number,
    kind: RoundKind,
  ): Promise<boolean> {
    try {
      await this.table.put(
        {
          pk,
          sk: roundKey(start, round),
          offsets: entries.map((e) => e.offset),
          attempts: entries.map((e) => e.deliveryAttempt),
          invisibleUntil,
          kind,
          expiresAt: this.#expiry(invisibleUntil),
        },
        { condition: { exists: false } },
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionFailedError) return false;
      throw err;
    }
  }

  /** Records acks of offsets of the checkpoint at `start`, each for the round it acks (one item). */
  async ack(pk: string, start: number, acks: { offset: number; round: number }[], now: number): Promise<void> {
    // Unconditional: the nonce makes the key this writer's own; an ack only ever adds "done".
    await this.table.put({
      pk,
      sk: `${startKey(start)}#a${newNonce()}`,
      offsets: acks.map((a) => a.offset),
      rounds: acks.map((a) => a.round),
      expiresAt: this.#expiry(now),
    });
  }

  /** Where a new group's POP offset of this queue was set (undefined: never received from). */
  async startMark(pk: string): Promise<number | undefined> {
    const item = await this.table.get({ pk, sk: LOW_WATER_SK }, { consistent: true });
    return item === undefined ? undefined : Number(item.start);
  }

  /**
   * Sets a new group's start on this queue. Condition `attribute_not_exists(pk)`: of first receivers racing,
   * one start wins and every one goes on from it.
   */
  async markStart(pk: string, start: number, now: number): Promise<number> {
    try {
      await this.table.put(
        { pk, sk: LOW_WATER_SK, start, expiresAt: this.#expiry(now) },
        { condition: { exists: false }, returnExistingOnFailure: true },
      );
      return start;
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || err.existing === undefined) throw err;
      return Number(err.existing.start);
    }
  }

  async lowWater(pk: string): Promise<number> {
    const item = await this.table.get({ pk, sk: LOW_WATER_SK });
    return item === undefined ? 0 : Number(item.start);
  }

  async setLowWater(pk: string, start: number, now: number): Promise<void> {
    // Unconditional: only ever a start at or below the oldest unfinished checkpoint; a racing lower value
    // only makes the next scan read more.
    await this.table.put({ pk, sk: LOW_WATER_SK, start, expiresAt: this.#expiry(now) });
  }

  #expiry(at: number): number {
    return Math.floor((at + this.retentionMs) / 1000);
  }
}

/** Folds items (in key order: a checkpoint, then its rounds and acks) into checkpoint states. */
function stateOf(items: Item[]): CheckpointState[] {
  const out: CheckpointState[] = [];
  let current: CheckpointState | undefined;
  const acks: { offsets: number[]; rounds: number[] }[] = [];
  const close = () => {
    if (current === undefined) return;
    for (const a of acks) {
      for (const [i, offset] of a.offsets.entries()) {
        const state = current.offsets.get(offset);
        if (state !== undefined && state.round === a.rounds[i]) state.acked = true;
      }
    }
    out.push(current);
    acks.length = 0;
  };
  for (const item of items) {
    const sk = String(item.sk);
    const hash = sk.indexOf("#");
    if (hash < 0) {
      close();
      const head: Checkpoint = {
        start: Number(item.start),
        end: Number(item.end),
        offsets: (item.offsets as number[]).map(Number),
        invisibleUntil: Number(item.invisibleUntil),
        nonce: String(item.nonce),
      };
      const offsets = new Map<number, OffsetState>();
      for (const offset of head.offsets) {
        offsets.set(offset, {
          offset,
          round: 1,
          deliveryAttempt: 1,
          invisibleUntil: head.invisibleUntil,
          kind: "receive",
          acked: false,
        });
      }
      current = { head, maxRound: 1, offsets };
      continue;
    }
    if (current === undefined || sk.slice(0, hash) !== startKey(current.head.start)) continue;
    if (sk[hash + 1] === "r") {
      const round = Number(sk.slice(hash + 2));
      current.maxRound = Math.max(current.maxRound, round);
      const attempts = item.attempts as number[];
      for (const [i, offset] of (item.offsets as number[]).entries()) {
        const state = current.offsets.get(offset);
        if (state === undefined) continue;
        state.round = round;
        state.deliveryAttempt = Number(attempts[i]);
        state.invisibleUntil = Number(item.invisibleUntil);
        state.kind = item.kind as RoundKind;
      }
    } else if (sk[hash + 1] === "a") {
      acks.push({ offsets: (item.offsets as number[]).map(Number), rounds: (item.rounds as number[]).map(Number) });
    }
  }
  close();
  return out;
}
