/**
 * @module Broker queue locks of orderly consumers, as RocketMQ's `lockBatchMQ` / `unlockBatchMQ`
 * (RebalanceLockManager), with leases that survive API instances with skewed clocks (docs/client.md
 * "Orderly consumption").
 *
 * A queue's lock is a chain of lease records in the clients table, partition
 * `qlock:<group>:<topic>:<brokerName>:<queueId>`, sort key the record's epoch (zero-padded). The record with
 * the highest epoch says who holds the queue: `holder` until `leaseUntil` (broker time), or nobody when it is
 * an unlock. Every lock, renewal and unlock creates the next epoch with a conditional create
 * (`attribute_not_exists`): of writers that read the same latest record, exactly one extends the chain, so
 * two clients can never both be granted a lease after the same record, and a late write of a former holder
 * fails instead of overwriting its successor's lease. Old records are left to the table's TTL.
 *
 * A lease of another client blocks a lock until `leaseUntil + skewMarginMs` on the granting instance's clock:
 * instances whose clocks differ by less than the margin never see a lease end before its holder does. The
 * holder itself counts its lease from the moment it sent the request, on its own clock (lease.ts).
 *
 * @example
 * const locks = new QueueLockService(clientsTable, { leaseMs: 60_000, skewMarginMs: 5000 });
 * const [q] = await locks.lock("g", "T", "10.0.0.1@1", [{ brokerName: "broker-a", queueId: 0 }]);
 * // q.locked, q.epoch; renew by locking again; unlock at rebalance-away and shutdown
 */
import type { LockedQueue, QueueRef as LockQueueRef } from "../../protocol/index.js";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import { keys } from "../store/index.js";

export type { LockedQueue, LockQueueRef };

export interface QueueLockOptions {
  /** How long a lease lasts without renewal (RocketMQ's rebalanceLockMaxLiveTime, 60 s). */
  leaseMs: number;
  /** The clock skew between API instances the leases tolerate. */
  skewMarginMs: number;
}

export const DEFAULT_QUEUE_LOCK_OPTIONS: QueueLockOptions = { leaseMs: 60_000, skewMarginMs: 5000 };

/** Lease records stay a day past their lease, then DynamoDB TTL removes them. */
const TTL_SECONDS = 24 * 3600;
const EPOCH_DIGITS = 15;

interface LeaseRecord {
  epoch: number;
  holder: string;
  leaseUntil: number;
  unlocked: boolean;
}

function toRecord(item: Item | undefined): LeaseRecord | undefined {
  if (item === undefined) return undefined;
  return {
    epoch: Number(item.epoch),
    holder: String(item.holder),
    leaseUntil: Number(item.leaseUntil),
    unlocked: item.unlocked === true,
  };
}

export class QueueLockService {
  constructor(
    private readonly clients: Table,
    private readonly options: QueueLockOptions = DEFAULT_QUEUE_LOCK_OPTIONS,
    private readonly now: () => number = Date.now,
  ) {}

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Locks or renews each queue for `clientId`; a queue whose lease another client holds is refused. */
  lock(group: string, topic: string, clientId: string, queues: readonly LockQueueRef[]): Promise<LockedQueue[]> {
    return Promise.all(queues.map((q) => this.#lockOne(group, topic, clientId, q)));
  }

  /** Ends `clientId`'s leases of the queues it holds; answers the queues it held (others are left alone). */
  async unlock(
    group: string,
    topic: string,
    clientId: string,
    queues: readonly LockQueueRef[],
  ): Promise<LockQueueRef[]> {
    const done = await Promise.all(
      queues.map(async (q) => {
        const latest = await this.#latest(group, topic, q);
        if (latest === undefined || latest.unlocked || latest.holder !== clientId) return undefined;
        const written = await this.#extend(group, topic, q, latest.epoch + 1, clientId, true);
        return written.ok ? q : undefined;
      }),
    );
    return done.filter((q): q is LockQueueRef => q !== undefined);
  }

  /** The current lease of each queue (holder "" when free): for status pages and tests. */
  async holders(group: string, topic: string, queues: readonly LockQueueRef[]): Promise<LockedQueue[]> {
    const now = this.now();
    return Promise.all(
      queues.map(async (q) => {
        const latest = await this.#latest(group, topic, q);
        const held = latest !== undefined && !latest.unlocked && now <= latest.leaseUntil;
        return {
          ...q,
          locked: held,
          holder: held ? latest.holder : "",
          epoch: latest?.epoch ?? 0,
          leaseMillis: held ? latest.leaseUntil - now : 0,
          continued: false,
        };
      }),
    );
  }

  async #lockOne(group: string, topic: string, clientId: string, q: LockQueueRef): Promise<LockedQueue> {
    const latest = await this.#latest(group, topic, q);
    const mine = latest !== undefined && !latest.unlocked && latest.holder === clientId;
    const refused = (holder: string, epoch: number): LockedQueue => ({
      ...q,
      locked: false,
      holder,
      epoch,
      leaseMillis: 0,
      continued: false,
    });
    if (
      latest !== undefined &&
      !latest.unlocked &&
      !mine &&
      this.now() <= latest.leaseUntil + this.options.skewMarginMs
    ) {
      return refused(latest.holder, latest.epoch);
    }
    const epoch = (latest?.epoch ?? 0) + 1;
    const written = await this.#extend(group, topic, q, epoch, clientId, false);
    if (!written.ok) {
      const winner = written.existing;
      // Our own concurrent request extended the chain: that lease is ours too.
      if (winner !== undefined && winner.holder === clientId && !winner.unlocked) {
        return {
          ...q,
          locked: true,
          holder: clientId,
          epoch: winner.epoch,
          leaseMillis: this.leaseMs,
          continued: mine,
        };
      }
      return refused(winner?.holder ?? "", winner?.epoch ?? epoch);
    }
    // `continued`: nobody held the queue between this client's previous lease and this one, so what it
    // cached and consumed under the previous lease is still its own.
    return { ...q, locked: true, holder: clientId, epoch, leaseMillis: this.leaseMs, continued: mine };
  }

  async #latest(group: string, topic: string, q: LockQueueRef): Promise<LeaseRecord | undefined> {
    const page = await this.clients.query(keys.queueLock(group, topic, q.brokerName, q.queueId), {
      descending: true,
      limit: 1,
      consistent: true,
    });
    return toRecord(page.items[0]);
  }

  /** Creates lease record `epoch`; fails (answering the record that won) when another writer created it first. */
  async #extend(
    group: string,
    topic: string,
    q: LockQueueRef,
    epoch: number,
    holder: string,
    unlocked: boolean,
  ): Promise<{ ok: true } | { ok: false; existing: LeaseRecord | undefined }> {
    const now = this.now();
    const leaseUntil = unlocked ? now : now + this.options.leaseMs;
    try {
      // Conditional create (attribute_not_exists): the chain grows by exactly one record per epoch, so of a
      // renewal, a takeover and an unlock racing after the same record, one wins and the others learn who.
      await this.clients.put(
        {
          pk: keys.queueLock(group, topic, q.brokerName, q.queueId),
          sk: String(epoch).padStart(EPOCH_DIGITS, "0"),
          epoch,
          holder,
          leaseUntil,
          unlocked,
          expiresAt: Math.floor(leaseUntil / 1000) + TTL_SECONDS,
        },
        { condition: { exists: false }, returnExistingOnFailure: true },
      );
      return { ok: true };
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      return { ok: false, existing: toRecord(err.existing) };
    }
  }
}
