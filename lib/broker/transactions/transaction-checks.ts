/**
 * @module Check-backs (RocketMQ's TransactionalMessageCheckService), serverless: a scheduled job (a timer
 * locally, an EventBridge schedule on AWS) reads the transactions due for a check in every pending shard,
 * and for each one claims the next check round, leaves the check for the group's most recently heard-from
 * live transactional producer — any producer of the group, not necessarily the sender — and moves the next
 * check one interval on. The producer receives it with its next heartbeat's answer. After `checkMax` rounds
 * the message is kept in TRANS_CHECK_MAX_TIME_TOPIC, where operators read it, and the transaction discarded.
 * The job also finishes commits whose deliverer died, and ends transactions whose half message is gone.
 * One entry's failure is counted and the pass goes on; a pass stops taking entries after its time budget.
 */
import { ErrorCode, isNimbusError } from "../../core/errors.js";
import { MessageConst } from "../../core/message.js";
import type { Item, Table } from "../../storage/table.js";
import type { ClientService } from "../clients/index.js";
import type { QueueLog, QueueRef, StoredMessage } from "../queue-log/index.js";
import { dueKey, MAX_RUN_MS } from "../store/index.js";
import { PENDING_SHARDS, pendingShardPk, realQueue, type TransactionRecords } from "./transaction-records.js";
import type { TransactionService } from "./transaction-service.js";

export interface TransactionCheckReport {
  /** Check rounds claimed. */
  checked: number;
  /** Checks left for a live producer (a round with no live producer is still a round). */
  sentToProducers: number;
  discarded: number;
  /** Commits whose delivery was finished by the checker. */
  recovered: number;
  /** Entries that failed this pass (they are tried again at the next). */
  failed: number;
}

export interface TransactionCheckerOptions {
  /** A pass takes no new entry after this long (the scheduled function has 60 s). Default 40 s. */
  runBudgetMs?: number;
}

/**
 * A claim older than this is abandoned and may be taken over: several times the longest request or run, so
 * a slow taker has long finished before the next one starts.
 */
export const TAKEOVER_LEASE_MS = 5 * MAX_RUN_MS;
/** Pending entries read per query page. */
const PAGE = 100;

export class TransactionChecker {
  constructor(
    private readonly table: Table,
    private readonly transactions: TransactionService,
    private readonly clients: ClientService,
    private readonly queueLog: QueueLog,
    /** Where a discarded message is kept for operators. */
    private readonly keepQueue: (brokerName: string) => Promise<QueueRef>,
    private readonly now: () => number = Date.now,
    private readonly options: TransactionCheckerOptions = {},
  ) {}

  /** One pass over every transaction due for a check now. */
  async run(): Promise<TransactionCheckReport> {
    const report: TransactionCheckReport = { checked: 0, sentToProducers: 0, discarded: 0, recovered: 0, failed: 0 };
    const started = this.now();
    const budget = this.options.runBudgetMs ?? 40_000;
    // `~` sorts after `#` and every character of a transaction id: every entry due at or before now.
    const dueBy = `${dueKey(started)}~`;
    for (let shard = 0; shard < PENDING_SHARDS; shard++) {
      let startAfter: string | number | undefined;
      do {
        const page = await this.table.query(pendingShardPk(shard), {
          sk: { lte: dueBy },
          limit: PAGE,
          consistent: true,
          startAfter,
        });
        for (const entry of page.items) {
          if (this.now() - started > budget) return report;
          try {
            await this.#checkOne(entry, report);
          } catch (err) {
            report.failed++;
            console.error(`nimbus: transaction check of ${String(entry.transactionId)} failed:`, err);
          }
        }
        startAfter = page.lastSk;
      } while (startAfter !== undefined);
    }
    return report;
  }

  async #checkOne(entry: Item, report: TransactionCheckReport): Promise<void> {
    const id = String(entry.transactionId);
    const sk = String(entry.sk);
    const tx = this.transactions;
    let records: TransactionRecords;
    try {
      records = await tx.records(String(entry.producerGroup), id);
    } catch (err) {
      // No half record: its writer died before it (the entry is written first). Nothing to check.
      if (isNimbusError(err, ErrorCode.QUERY_NOT_FOUND)) return tx.dropPending(id, sk);
      throw err;
    }
    // Only the newest entry schedules checks; another is a leftover of a move or a half-written request.
    if (records.end === undefined && records.pendingSk !== sk) return tx.dropPending(id, sk);
    if (records.end !== undefined) {
      if (records.end.state === "COMMITTED" && records.delivered === undefined) {
        if (await this.#recoverDelivery(id, records)) report.recovered++;
        return;
      }
      return tx.dropPending(id, sk);
    }
    const { checkMax, checkIntervalMs } = tx.options;
    if (records.checkTimes >= checkMax) {
      if (await this.#discard(id, records)) report.discarded++;
      return;
    }
    const round = records.checkTimes + 1;
    // A little early rather than a whole schedule period late (EventBridge fires every minute, not on the ms).
    const nextDueAt = this.now() + checkIntervalMs - Math.min(5_000, checkIntervalMs / 4);
    if (!(await tx.claimCheck(id, records, round, nextDueAt))) return;
    report.checked++;
    const group = String(records.half.producerGroup);
    const [producer] = await this.clients.producers(group, { transactional: true });
    if (producer === undefined) return;
    await this.clients.addTransactionCheck(producer.clientId, {
      transactionId: id,
      producerGroup: group,
      checkTimes: round,
    });
    report.sentToProducers++;
  }

  /**
   * Discards a transaction checked `checkMax` times. Its discard is claimed as round checkMax + 1 (one taker;
   * another after the lease if that one died), the message kept for operators, then the end recorded; a
   * half message already gone is ended without keeping. True when this pass discarded it.
   */
  async #discard(id: string, records: TransactionRecords): Promise<boolean> {
    const tx = this.transactions;
    const discardRound = tx.options.checkMax + 1;
    if (records.checkTimes < discardRound) {
      if ((await tx.claim(id, `check:${discardRound}`, {})) === undefined) return false;
    } else if (this.now() - records.lastCheckAt < TAKEOVER_LEASE_MS) {
      return false;
    }
    const message = await this.#halfOrGone(records);
    if (message !== undefined) {
      await this.queueLog.append(await this.keepQueue(String(records.half.brokerName)), [message]);
    }
    if ((await tx.claim(id, "end", { state: "DISCARDED", tailAtClaim: 0 })) === undefined) return false;
    await tx.dropPending(id, records.pendingSk);
    return true;
  }

  /**
   * Finishes a commit whose deliverer gave up or died: after the lease, one taker (a `deliver:<n>` claim)
   * looks for the message in its real queue — from the tail seen when the end was claimed up to what any
   * earlier deliverer could have written, the newest claim plus the longest run — and appends it only if it
   * is not there. True when this pass delivered it.
   */
  async #recoverDelivery(id: string, records: TransactionRecords): Promise<boolean> {
    const tx = this.transactions;
    const end = records.end;
    if (end === undefined || this.now() - records.lastClaimAt < TAKEOVER_LEASE_MS) return false;
    if ((await tx.claim(id, `deliver:${records.deliveryClaims + 1}`, {})) === undefined) return false;
    const queue = realQueue(records.half);
    const found = await this.#findDelivered(queue, Number(end.tailAtClaim), records.lastClaimAt + MAX_RUN_MS, id);
    if (found !== undefined) await tx.markDelivered(id, found);
    else {
      const message = await this.#halfOrGone(records);
      // Gone with retention before anyone delivered it: nothing left to deliver, stop trying.
      if (message === undefined) {
        await tx.dropPending(id, records.pendingSk);
        return false;
      }
      await tx.deliver(message, queue, id);
    }
    await tx.dropPending(id, records.pendingSk);
    return true;
  }

  /** Where a committed message landed: its UNIQ_KEY in `queue` from `from`, among messages stored by `until`. */
  async #findDelivered(queue: QueueRef, from: number, until: number, id: string): Promise<number | undefined> {
    let offset = from;
    for (;;) {
      const page = await this.queueLog.read(queue, offset, { maxMessages: 256 });
      for (const m of page.messages) {
        if (m.storeTimestamp > until) return undefined;
        if (m.properties[MessageConst.UNIQ_KEY] === id && m.properties[MessageConst.TRAN_MSG] === "true") {
          return m.queueOffset;
        }
      }
      // Sealed ranges move the offset without messages; only a read that cannot move on ends the search.
      if (page.nextBeginOffset <= offset) return undefined;
      offset = page.nextBeginOffset;
    }
  }

  async #halfOrGone(records: TransactionRecords): Promise<StoredMessage | undefined> {
    try {
      return await this.transactions.readHalf(records.half);
    } catch (err) {
      if (isNimbusError(err, ErrorCode.QUERY_NOT_FOUND)) return undefined;
      throw err;
    }
  }
}
