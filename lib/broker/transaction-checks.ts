/**
 * @module Check-backs (RocketMQ's TransactionalMessageCheckService), serverless: a scheduled job (a timer
 * locally, an EventBridge schedule on AWS) reads the transactions due for a check, and for each one claims
 * the next check round, leaves the check for the group's most recently heard-from live producer — any
 * producer of the group, not necessarily the sender — and moves the transaction's next check one interval
 * on. The producer receives it in its next heartbeat's answer. After `checkMax` rounds the message is
 * discarded into TRANS_CHECK_MAX_TIME_TOPIC, where operators can read it.
 */
import { ErrorCode, isNimbusError } from "../core/errors.js";
import type { MessageRecord } from "../core/message.js";
import type { Item, Table } from "../storage/table.js";
import type { ClientService } from "./client-service.js";
import { keys } from "./tables.js";
import { pendingSk, type TransactionService } from "./transactions.js";

export interface TransactionCheckReport {
  /** Check rounds claimed. */
  checked: number;
  /** Checks left for a live producer (a round with no live producer is still a round). */
  sentToProducers: number;
  discarded: number;
  /** Commits whose delivery was finished by the checker. */
  recovered: number;
}

/** Pending entries read per query page. */
const PAGE = 100;

export class TransactionChecker {
  constructor(
    private readonly table: Table,
    private readonly transactions: TransactionService,
    private readonly clients: ClientService,
    /** Keeps a discarded message where operators can read it. */
    private readonly keepDiscarded: (brokerName: string, message: MessageRecord) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  /** One pass over every transaction due for a check now. */
  async run(): Promise<TransactionCheckReport> {
    const report: TransactionCheckReport = { checked: 0, sentToProducers: 0, discarded: 0, recovered: 0 };
    const now = this.now();
    // `~` sorts after every character of a transaction id: every entry due at or before now.
    const dueBy = `${pendingSk(now, "")}~`;
    let startAfter: string | number | undefined;
    do {
      const page = await this.table.query(keys.pendingTransactions, {
        sk: { lte: dueBy },
        limit: PAGE,
        consistent: true,
        startAfter,
      });
      for (const entry of page.items) await this.#checkOne(String(entry.sk), entry, now, report);
      startAfter = page.lastSk;
    } while (startAfter !== undefined);
    return report;
  }

  async #checkOne(sk: string, entry: Item, now: number, report: TransactionCheckReport): Promise<void> {
    const id = String(entry.transactionId);
    const group = String(entry.producerGroup);
    const stale = () => this.table.delete({ pk: keys.pendingTransactions, sk });
    let records: Awaited<ReturnType<TransactionService["records"]>>;
    try {
      records = await this.transactions.records(group, id);
    } catch (err) {
      if (isNimbusError(err, ErrorCode.QUERY_NOT_FOUND)) return stale();
      throw err;
    }
    if (records.end !== undefined) {
      if (records.end.state === "COMMITTED" && records.delivered === undefined) {
        await this.transactions.recoverDelivery(id, records);
        const after = await this.transactions.records(group, id);
        if (after.delivered !== undefined) report.recovered++;
        return;
      }
      // Unconditional delete: an ended transaction needs no more checks.
      return stale();
    }
    // Only the newest entry schedules checks; an older one is left from a crash between move and delete.
    if (records.pendingSks.at(-1) !== sk) return stale();
    const { checkMax, checkIntervalMs } = this.transactions.options;
    if (records.checkTimes >= checkMax) {
      await this.transactions.discard(id, records, this.keepDiscarded);
      report.discarded++;
      return;
    }
    const round = records.checkTimes + 1;
    if (!(await this.transactions.claimCheck(id, records, round, now + checkIntervalMs))) return;
    report.checked++;
    const [producer] = await this.clients.producers(group);
    if (producer === undefined) return;
    await this.clients.addTransactionCheck(producer.clientId, {
      transactionId: id,
      producerGroup: group,
      checkTimes: round,
    });
    report.sentToProducers++;
  }
}
