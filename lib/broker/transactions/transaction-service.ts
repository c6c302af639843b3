/**
 * @module Transactional messages, as RocketMQ's: a half message is stored in one of its broker's half queues
 * (`RMQ_SYS_TRANS_HALF_TOPIC`, which has no route, so no consumer sees it) with records in the transactions
 * table (transaction-records.ts); ending it with commit appends it to its real queue once, rollback drops it.
 * Every state change is a put with the condition "no item has this key" on one record of the transaction's
 * partition (`end`, `delivered`, `check:<n>`, `deliver:<n>`): the first writer wins, so two producers ending
 * one transaction at once, or a retried end, deliver once. A pending entry is always written before the
 * record that points at it, so a failure in between leaves a stray entry (dropped by the checker), never a
 * transaction that nothing will check. Check-backs, discards and delivery recovery: transaction-checks.ts.
 */
import { isDelayed } from "../../core/delay-levels.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MessageConst, type MessageRecord } from "../../core/message.js";
import {
  type EndState,
  type HalfMessageRequest,
  type HalfMessageResponse,
  type PulledMessage,
  type TransactionInfo,
  type TransactionState,
  transactionId as transactionIdSchema,
} from "../../protocol/index.js";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import { toPulled } from "../consume/index.js";
import type { SendService } from "../produce/index.js";
import type { QueueLog, QueueRef, StoredMessage } from "../queue-log/index.js";
import { keys, queryAll } from "../store/index.js";
import {
  halfQueue,
  halfResponse,
  infoOf,
  notFound,
  pendingPkOf,
  pendingSk,
  realQueue,
  type TransactionRecords,
  toRecords,
} from "./transaction-records.js";

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

const illegal = (message: string) => new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);

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

  /**
   * Stores a half message. Every check runs before the first write. A retried request (same UNIQ_KEY, group
   * and topic, transaction not ended) answers the half message already stored; an id already ended is refused.
   */
  async sendHalf(req: HalfMessageRequest): Promise<HalfMessageResponse> {
    if ((req.message.delayTimeLevel ?? 0) !== 0 || isDelayed(req.message.properties)) {
      throw illegal("a transactional message cannot be delayed");
    }
    const { producerGroup, message, ...where } = req;
    const { records, queue } = await this.sender.prepare({ ...where, producerGroup, messages: [message] }, (r) => ({
      ...r,
      properties: { ...r.properties, [MessageConst.TRAN_MSG]: "true", [MessageConst.PGROUP]: producerGroup },
    }));
    const record = records[0] as MessageRecord;
    const id = record.properties[MessageConst.UNIQ_KEY] as string;
    if (!transactionIdSchema.safeParse(id).success) {
      throw illegal(`UNIQ_KEY ${JSON.stringify(id)} cannot be a transaction id (1..128 of [0-9A-Za-z_-])`);
    }
    const firstCheckAt = this.#firstCheckAt(record);
    const existing = toRecords(await queryAll(this.table, keys.transaction(id), { consistent: true }));
    if (existing !== undefined) return this.#retriedHalf(id, existing, producerGroup, queue.topic);

    const stored = await this.queueLog.append(halfQueue(queue.brokerName, id), [
      {
        ...record,
        properties: {
          ...record.properties,
          [MessageConst.REAL_TOPIC]: queue.topic,
          [MessageConst.REAL_QID]: String(queue.queueId),
        },
      },
    ]);
    const pending = pendingSk(stored.storeTimestamp + firstCheckAt, id, 0);
    await this.#putPending(pending, id, producerGroup);
    const half: Item = {
      pk: keys.transaction(id),
      sk: "half",
      pendingSk: pending,
      producerGroup,
      topic: queue.topic,
      brokerName: queue.brokerName,
      queueId: queue.queueId,
      halfOffset: stored.queueOffset,
      storeTimestamp: stored.storeTimestamp,
      expiresAt: this.#expiresAt(),
    };
    try {
      // Condition `attribute_not_exists(pk)`: one half record per transaction id; a racing retry keeps the first.
      await this.table.put(half, { condition: { exists: false }, returnExistingOnFailure: true });
      return halfResponse(id, half);
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || err.existing === undefined) throw err;
      return halfResponse(id, err.existing);
    }
  }

  /**
   * Ends a transaction. The first end wins (a condition on the `end` record); a later one, or a retry,
   * changes nothing and answers the state the transaction has. A commit appends the message to its real
   * queue once, keeping its msgId and properties (`TRAN_MSG`, `PGROUP`).
   */
  async end(producerGroup: string, id: string, state: EndState): Promise<TransactionInfo> {
    const records = await this.records(producerGroup, id);
    if (records.end !== undefined) return this.#info(id, records);
    const queue = realQueue(records.half);
    // Read before the end is claimed: a half message gone (retention) fails the commit without writing.
    const message = state === "COMMIT_MESSAGE" ? await this.readHalf(records.half) : undefined;
    const tailAtClaim = message === undefined ? 0 : await this.queueLog.maxOffset(queue);
    const endState: TransactionState = message === undefined ? "ROLLED_BACK" : "COMMITTED";
    const end = await this.claim(id, "end", { state: endState, tailAtClaim });
    // Another end came first: answer what it made of the transaction.
    if (end === undefined) return this.info(producerGroup, id);
    const delivered = message === undefined ? undefined : await this.deliver(message, queue, id);
    await this.dropPending(id, records.pendingSk);
    return this.#info(id, { ...records, end, delivered });
  }

  /** The transaction's state and where its message goes. */
  async info(producerGroup: string, id: string): Promise<TransactionInfo> {
    return this.#info(id, await this.records(producerGroup, id));
  }

  /** The half message as a consumer would see it (its real topic and queue, the half offset). */
  async message(producerGroup: string, id: string): Promise<PulledMessage> {
    const { half } = await this.records(producerGroup, id);
    const message = await this.readHalf(half);
    return { ...toPulled(realQueue(half), message), queueOffset: Number(half.halfOffset) };
  }

  /** Every record of the transaction, if it belongs to `producerGroup`. */
  async records(producerGroup: string, id: string): Promise<TransactionRecords> {
    const records = toRecords(await queryAll(this.table, keys.transaction(id), { consistent: true }));
    if (records === undefined || records.half.producerGroup !== producerGroup) throw notFound(id);
    return records;
  }

  /**
   * Claims record `sk` of the transaction; undefined when another writer has it. Condition
   * `attribute_not_exists(pk)`: only the first writer of a record wins, which makes every step happen once.
   */
  async claim(id: string, sk: string, attributes: Record<string, string | number>): Promise<Item | undefined> {
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

  /** Appends a half message to its real queue and records where (the first delivery's offset stays the answer). */
  async deliver(message: StoredMessage, queue: QueueRef, id: string): Promise<Item> {
    const { [MessageConst.REAL_TOPIC]: _t, [MessageConst.REAL_QID]: _q, ...properties } = message.properties;
    const { queueOffset: _o, storeTimestamp: _s, ...record } = message;
    const { queueOffset } = await this.queueLog.append(queue, [{ ...record, properties }]);
    return this.markDelivered(id, queueOffset);
  }

  async markDelivered(id: string, queueOffset: number): Promise<Item> {
    const delivered = await this.claim(id, "delivered", { queueOffset });
    return delivered ?? { pk: keys.transaction(id), sk: "delivered", queueOffset };
  }

  /** The half message; QUERY_NOT_FOUND once retention has trimmed it. */
  async readHalf(half: Item): Promise<StoredMessage> {
    const offset = Number(half.halfOffset);
    const queue = halfQueue(String(half.brokerName), String(half.pk).slice("tx:".length));
    const page = await this.queueLog.read(queue, offset, { maxMessages: 1 });
    const message = page.messages[0];
    if (message?.queueOffset !== offset) {
      throw new NimbusError(ErrorCode.QUERY_NOT_FOUND, `the half message at offset ${offset} is gone (retention)`);
    }
    return message;
  }

  /**
   * Claims check round `round` (RocketMQ's checkTimes) and moves the pending entry to `nextDueAt`: the new
   * entry is written first, the claim then points at it, and only then is the processed entry deleted.
   * False (and the new entry removed) when another checker has this round already.
   */
  async claimCheck(id: string, records: TransactionRecords, round: number, nextDueAt: number): Promise<boolean> {
    const next = pendingSk(nextDueAt, id, round);
    await this.#putPending(next, id, String(records.half.producerGroup));
    if ((await this.claim(id, `check:${round}`, { pendingSk: next })) === undefined) {
      await this.dropPending(id, next);
      return false;
    }
    await this.dropPending(id, records.pendingSk);
    return true;
  }

  /** Deletes one pending entry of the transaction. Unconditional: an entry only schedules checks. */
  async dropPending(id: string, sk: string): Promise<void> {
    await this.table.delete({ pk: pendingPkOf(id), sk });
  }

  async #retriedHalf(
    id: string,
    existing: TransactionRecords,
    producerGroup: string,
    topic: string,
  ): Promise<HalfMessageResponse> {
    if (existing.half.producerGroup !== producerGroup || existing.half.topic !== topic) {
      throw illegal(`transaction id ${id} is taken by another message`);
    }
    if (existing.end !== undefined) {
      throw illegal(
        `transaction ${id} has ended (${String(existing.end.state)}): a new transaction needs a new UNIQ_KEY`,
      );
    }
    // The first attempt may have died before its pending entry: write it again (a second copy is harmless).
    await this.#putPending(existing.pendingSk, id, producerGroup);
    return halfResponse(id, existing.half);
  }

  /** When the first check is due: the timeout, or the message's CHECK_IMMUNITY_TIME_IN_SECONDS (bounded). */
  #firstCheckAt(record: MessageRecord): number {
    const given = record.properties[MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS];
    if (given === undefined) return this.options.timeoutMs;
    const seconds = Number(given);
    // Half the retention at most: the half message must outlive its last check.
    const maxSeconds = Math.floor(this.options.retentionMs / 2000);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > maxSeconds) {
      throw illegal(
        `${MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS} is a whole number of seconds from 1 to ${maxSeconds}`,
      );
    }
    return seconds * 1000;
  }

  async #putPending(sk: string, id: string, producerGroup: string): Promise<void> {
    // Unconditional put: the entry only says when to check; its nonce makes it this writer's own.
    await this.table.put({
      pk: pendingPkOf(id),
      sk,
      transactionId: id,
      producerGroup,
      expiresAt: this.#expiresAt(),
    });
  }

  #info(id: string, records: TransactionRecords): TransactionInfo {
    return infoOf(id, records, this.options.checkMax);
  }

  #expiresAt(): number {
    return Math.floor((this.#now() + this.options.retentionMs) / 1000);
  }
}
