/**
 * @module Transactional messages, as RocketMQ's: a half message is stored in its broker's half queue
 * (`RMQ_SYS_TRANS_HALF_TOPIC`, invisible to consumers) with a record in the transactions table; ending it
 * with commit appends it to its real queue once, rollback drops it. Every state change is a put with the
 * condition "no item has this key" on one record of the transaction's partition (`end`, `delivered`,
 * `check:<n>`, `deliver:<n>`): the first writer wins, so two producers ending one transaction at once, or a
 * retried end, deliver once. Check-backs are in transaction-checks.ts.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";
import { MessageConst, type MessageRecord } from "../core/message.js";
import { RMQ_SYS_TRANS_HALF_TOPIC } from "../core/names.js";
import type {
  EndState,
  HalfMessageRequest,
  HalfMessageResponse,
  PulledMessage,
  TransactionInfo,
  TransactionState,
} from "../protocol/index.js";
import { ConditionFailedError, type Item, type Table } from "../storage/table.js";
import { toPulled } from "./pull-service.js";
import type { QueueRef } from "./queue-index.js";
import type { QueueLog } from "./queue-log.js";
import type { SendService } from "./send-service.js";
import { keys } from "./tables.js";

export interface TransactionOptions {
  /** RocketMQ's transactionTimeOut: a half message is first checked this long after it was stored. 6 s. */
  timeoutMs: number;
  /** RocketMQ's transactionCheckInterval: time between two checks of one transaction. 60 s. */
  checkIntervalMs: number;
  /** RocketMQ's transactionCheckMax: checks before the message is discarded. 15. */
  checkMax: number;
  /** How long records stay after they matter (DynamoDB TTL tidies up): the retention. */
  retentionMs: number;
}

export const DEFAULT_TRANSACTION_OPTIONS: Omit<TransactionOptions, "retentionMs"> = {
  timeoutMs: 6_000,
  checkIntervalMs: 60_000,
  checkMax: 15,
};

/**
 * An end claimed by a request that then failed to deliver (a crash, a store error) is taken over by the
 * checker after this long: longer than any request runs (API Gateway gives up after 30 s).
 */
export const DELIVERY_LEASE_MS = 60_000;

/** A transaction's records, read with one query of its partition. */
export interface TransactionRecords {
  half: Item;
  end: Item | undefined;
  delivered: Item | undefined;
  checkTimes: number;
  /** Delivery claims after the end's (`deliver:<n>`), and when the newest claim was made. */
  deliveryClaims: number;
  lastClaimAt: number;
  /** Where the transaction's pending entry is (the newest check moved it), and where it was before. */
  pendingSks: string[];
}

const notFound = (id: string) => new NimbusError(ErrorCode.QUERY_NOT_FOUND, `no transaction ${id} in this group`);
const PAD = 15;
export const pendingSk = (dueAt: number, id: string): string =>
  `${String(Math.max(0, dueAt)).padStart(PAD, "0")}#${id}`;

export class TransactionService {
  readonly #now: () => number;

  constructor(
    private readonly table: Table,
    private readonly sender: SendService,
    private readonly queueLog: QueueLog,
    readonly options: TransactionOptions,
    now: () => number = Date.now,
  ) {
    this.#now = now;
  }

  /** Stores a half message. A retried request (same UNIQ_KEY, same group) answers the half already stored. */
  async sendHalf(req: HalfMessageRequest): Promise<HalfMessageResponse> {
    if ((req.message.delayTimeLevel ?? 0) !== 0) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "a transactional message cannot be delayed");
    }
    const { producerGroup, message, ...where } = req;
    const { records, queue } = await this.sender.prepare({ ...where, producerGroup, messages: [message] }, (r) => ({
      ...r,
      properties: { ...r.properties, [MessageConst.TRAN_MSG]: "true", [MessageConst.PGROUP]: producerGroup },
    }));
    const record = records[0] as MessageRecord;
    const id = record.properties[MessageConst.UNIQ_KEY] as string;
    const half = halfQueue(queue.brokerName);
    const stored = await this.queueLog.append(half, [
      {
        ...record,
        properties: {
          ...record.properties,
          [MessageConst.REAL_TOPIC]: queue.topic,
          [MessageConst.REAL_QID]: String(queue.queueId),
        },
      },
    ]);
    const immunity = Number(record.properties[MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS]);
    const firstCheckAt =
      stored.storeTimestamp + (Number.isFinite(immunity) && immunity > 0 ? immunity * 1000 : this.options.timeoutMs);
    const firstPendingSk = pendingSk(firstCheckAt, id);
    const item: Item = {
      pk: keys.transaction(id),
      sk: "half",
      pendingSk: firstPendingSk,
      producerGroup,
      topic: queue.topic,
      brokerName: queue.brokerName,
      queueId: queue.queueId,
      halfOffset: stored.queueOffset,
      storeTimestamp: stored.storeTimestamp,
      expiresAt: this.#expiresAt(),
    };
    try {
      // Condition `attribute_not_exists(pk)`: one half record per transaction id; a retry finds its own.
      await this.table.put(item, { condition: { exists: false }, returnExistingOnFailure: true });
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      const existing = err.existing;
      if (existing?.producerGroup !== producerGroup || existing.topic !== queue.topic) {
        throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `transaction id ${id} is taken by another message`);
      }
      return halfResponse(id, existing);
    }
    // Unconditional put: the pending entry only says when to check; the checker tolerates stale ones.
    await this.table.put({
      pk: keys.pendingTransactions,
      sk: firstPendingSk,
      transactionId: id,
      producerGroup,
      expiresAt: this.#expiresAt(),
    });
    return halfResponse(id, item);
  }

  /**
   * Ends a transaction. The first end wins (a condition on the `end` record); a later one, or a retry,
   * changes nothing and answers the state the transaction has. A commit appends the message to its real
   * queue once, keeping its msgId and properties (`TRAN_MSG`, `PGROUP`).
   */
  async end(producerGroup: string, id: string, state: EndState): Promise<TransactionInfo> {
    const records = await this.records(producerGroup, id);
    if (records.end !== undefined) return infoOf(id, records);
    const queue = realQueue(records.half);
    const tailAtClaim = state === "COMMIT_MESSAGE" ? await this.queueLog.maxOffset(queue) : 0;
    const endState: TransactionState = state === "COMMIT_MESSAGE" ? "COMMITTED" : "ROLLED_BACK";
    const end = await this.#claim(id, "end", { state: endState, tailAtClaim });
    // Another end came first: answer what it made of the transaction.
    if (end === undefined) return this.info(producerGroup, id);
    const delivered = endState === "COMMITTED" ? await this.#deliver(records.half, queue, id) : undefined;
    await this.dropPending(records);
    return infoOf(id, { ...records, end, delivered });
  }

  /** The transaction's state and where its message goes. */
  async info(producerGroup: string, id: string): Promise<TransactionInfo> {
    return infoOf(id, await this.records(producerGroup, id));
  }

  /** The half message as a consumer would see it (its real topic and queue, the half offset). */
  async message(producerGroup: string, id: string): Promise<PulledMessage> {
    const { half } = await this.records(producerGroup, id);
    const message = await this.#readHalf(half);
    const queue = realQueue(half);
    return { ...toPulled(queue, message), queueOffset: Number(half.halfOffset) };
  }

  /** Every record of the transaction, if it belongs to `producerGroup`. */
  async records(producerGroup: string, id: string): Promise<TransactionRecords> {
    const page = await this.table.query(keys.transaction(id), { consistent: true });
    const bySk = new Map(page.items.map((i) => [String(i.sk), i]));
    const half = bySk.get("half");
    if (half === undefined || half.producerGroup !== producerGroup) throw notFound(id);
    const numbered = (prefix: string) =>
      page.items.filter((i) => String(i.sk).startsWith(prefix)).map((i) => Number(String(i.sk).slice(prefix.length)));
    const end = bySk.get("end");
    const deliverClaims = numbered("deliver:");
    const newestDeliver = deliverClaims.length === 0 ? undefined : bySk.get(`deliver:${Math.max(...deliverClaims)}`);
    const checkTimes = Math.max(0, ...numbered("check:"));
    const moves = [half, bySk.get(`check:${checkTimes - 1}`), bySk.get(`check:${checkTimes}`)];
    return {
      half,
      end,
      delivered: bySk.get("delivered"),
      checkTimes,
      deliveryClaims: deliverClaims.length,
      lastClaimAt: Number((newestDeliver ?? end)?.claimedAt ?? 0),
      pendingSks: [...new Set(moves.flatMap((i) => (typeof i?.pendingSk === "string" ? [i.pendingSk] : [])))],
    };
  }

  /**
   * Finishes a commit whose first deliverer gave up or died: after the lease, one taker (a `deliver:<n>`
   * claim) looks for the message in its real queue from the tail seen at the claim, and appends it only if
   * it is not there.
   */
  async recoverDelivery(id: string, records: TransactionRecords): Promise<void> {
    if (records.end?.state !== "COMMITTED" || records.delivered !== undefined) return;
    if (this.#now() - records.lastClaimAt < DELIVERY_LEASE_MS) return;
    if ((await this.#claim(id, `deliver:${records.deliveryClaims + 1}`, {})) === undefined) return;
    const queue = realQueue(records.half);
    const found = await this.#findDelivered(queue, Number(records.end.tailAtClaim), id);
    if (found === undefined) await this.#deliver(records.half, queue, id);
    else await this.#markDelivered(id, found);
    await this.dropPending(records);
  }

  /**
   * Discards a transaction checked `checkMax` times: kept in TRANS_CHECK_MAX_TIME_TOPIC for operators first,
   * then ended as DISCARDED, so a discarded message is always there to read (an end that comes in between
   * wins, and the kept copy is only an extra record for operators).
   */
  async discard(
    id: string,
    records: TransactionRecords,
    keep: (brokerName: string, m: MessageRecord) => Promise<void>,
  ) {
    await keep(String(records.half.brokerName), await this.#readHalf(records.half));
    if ((await this.#claim(id, "end", { state: "DISCARDED", tailAtClaim: 0 })) === undefined) return;
    await this.dropPending(records);
  }

  /**
   * Claims check round `round` (RocketMQ's checkTimes) and moves the pending entry to `nextDueAt`; false
   * when another checker has this round already.
   */
  async claimCheck(id: string, records: TransactionRecords, round: number, nextDueAt: number): Promise<boolean> {
    const next = pendingSk(nextDueAt, id);
    if ((await this.#claim(id, `check:${round}`, { pendingSk: next })) === undefined) return false;
    // Unconditional put, then delete: a crash in between leaves a stale entry the checker drops later.
    await this.table.put({
      pk: keys.pendingTransactions,
      sk: next,
      transactionId: id,
      producerGroup: String(records.half.producerGroup),
      expiresAt: this.#expiresAt(),
    });
    await Promise.all(records.pendingSks.map((sk) => this.table.delete({ pk: keys.pendingTransactions, sk })));
    return true;
  }

  /**
   * Claims record `sk` of the transaction. Condition `attribute_not_exists(pk)`: only the first writer of a
   * record wins, which is what makes every step of a transaction happen once.
   */
  async #claim(id: string, sk: string, attributes: Record<string, string | number>): Promise<Item | undefined> {
    const item: Item = {
      pk: keys.transaction(id),
      sk,
      ...attributes,
      claimedAt: this.#now(),
      expiresAt: this.#expiresAt(),
    };
    try {
      await this.table.put(item, { condition: { exists: false } });
      return item;
    } catch (err) {
      if (err instanceof ConditionFailedError) return undefined;
      throw err;
    }
  }

  /** Appends the half message to its real queue; answers the `delivered` record. */
  async #deliver(half: Item, queue: QueueRef, id: string): Promise<Item> {
    const message = await this.#readHalf(half);
    const { [MessageConst.REAL_TOPIC]: _t, [MessageConst.REAL_QID]: _q, ...properties } = message.properties;
    const { queueOffset } = await this.queueLog.append(queue, [{ ...message, properties }]);
    return this.#markDelivered(id, queueOffset);
  }

  async #markDelivered(id: string, queueOffset: number): Promise<Item> {
    // Condition `attribute_not_exists(pk)` (in #claim): the first delivery's offset stays the answer.
    const delivered = await this.#claim(id, "delivered", { queueOffset });
    return delivered ?? { pk: keys.transaction(id), sk: "delivered", queueOffset };
  }

  /** Where a committed message landed: scans its queue from `from` for its UNIQ_KEY. */
  async #findDelivered(queue: QueueRef, from: number, id: string): Promise<number | undefined> {
    let offset = from;
    for (;;) {
      const page = await this.queueLog.read(queue, offset, { maxMessages: 256 });
      const hit = page.messages.find(
        (m) => m.properties[MessageConst.UNIQ_KEY] === id && m.properties[MessageConst.TRAN_MSG] === "true",
      );
      if (hit) return hit.queueOffset;
      if (page.messages.length === 0 || page.nextBeginOffset <= offset) return undefined;
      offset = page.nextBeginOffset;
    }
  }

  async #readHalf(half: Item) {
    const offset = Number(half.halfOffset);
    const page = await this.queueLog.read(halfQueue(String(half.brokerName)), offset, { maxMessages: 1 });
    const message = page.messages[0];
    if (message?.queueOffset !== offset) {
      throw new NimbusError(ErrorCode.QUERY_NOT_FOUND, `the half message at offset ${offset} is gone (retention)`);
    }
    return message;
  }

  /** Removes the transaction's pending entries that its records know of; the checker drops any other. */
  async dropPending(records: TransactionRecords): Promise<void> {
    // Unconditional deletes: a pending entry only schedules checks; the end record decides the state.
    await Promise.all(records.pendingSks.map((sk) => this.table.delete({ pk: keys.pendingTransactions, sk })));
  }

  #expiresAt(): number {
    return Math.floor((this.#now() + this.options.retentionMs) / 1000);
  }
}

/** A broker's half queue: one queue per broker in the system topic. */
export const halfQueue = (brokerName: string): QueueRef => ({
  topic: RMQ_SYS_TRANS_HALF_TOPIC,
  brokerName,
  queueId: 0,
});

function realQueue(half: Item): QueueRef {
  return { topic: String(half.topic), brokerName: String(half.brokerName), queueId: Number(half.queueId) };
}

function halfResponse(id: string, half: Item): HalfMessageResponse {
  return {
    sendStatus: "SEND_OK",
    transactionId: id,
    msgId: id,
    messageQueue: realQueue(half),
    queueOffset: Number(half.halfOffset),
    storeTimestamp: Number(half.storeTimestamp),
  };
}

function infoOf(id: string, r: TransactionRecords): TransactionInfo {
  const state = (r.end?.state as TransactionState | undefined) ?? "PENDING";
  return {
    transactionId: id,
    producerGroup: String(r.half.producerGroup),
    state,
    checkTimes: r.checkTimes,
    messageQueue: realQueue(r.half),
    ...(r.delivered === undefined ? {} : { queueOffset: Number(r.delivered.queueOffset) }),
    storeTimestamp: Number(r.half.storeTimestamp),
  };
}
