/**
 * @module Where a transaction's state lives, and the shapes of its records. A transaction is one partition of
 * the transactions table, `tx:<id>`, whose records are each written once (`half`, `end`, `delivered`,
 * `check:<n>`, `deliver:<n>`), plus one entry in a pending shard (`txpending:<shard>` / `<due>#<id>#<round>#<nonce>`)
 * while it waits for its next check. Its half message sits in one of its broker's half queues.
 */
import { randomBytes } from "node:crypto";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { RMQ_SYS_TRANS_HALF_TOPIC } from "../../core/names.js";
import type { HalfMessageResponse, TransactionInfo, TransactionState } from "../../protocol/index.js";
import type { Item } from "../../storage/table.js";
import type { QueueRef } from "../queue-log/index.js";
import { dueKey } from "../store/index.js";

/** Half queues per broker: transactions spread over them by id, so one queue's chain is no bottleneck. */
export const HALF_QUEUES = 8;
/** Pending shards: the due transactions are spread over this many partitions, each read by the checker. */
export const PENDING_SHARDS = 8;

/** A transaction's records, read with one query of its partition. */
export interface TransactionRecords {
  half: Item;
  end: Item | undefined;
  delivered: Item | undefined;
  /** Check rounds claimed (`check:<n>`); the discard claims round checkMax + 1. */
  checkTimes: number;
  /** When the newest check round was claimed (0 before the first). */
  lastCheckAt: number;
  /** Delivery claims after the end's (`deliver:<n>`), and when the newest delivery claim was made. */
  deliveryClaims: number;
  lastClaimAt: number;
  /** The sort key of the transaction's current pending entry (the newest check moved it). */
  pendingSk: string;
}

/** A small stable hash of a transaction id: its half queue and its pending shard. */
function idHash(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (Math.imul(h, 31) + id.charCodeAt(i)) >>> 0;
  return h;
}

export const pendingShardPk = (shard: number): string => `txpending:${shard}`;
export const pendingPkOf = (id: string): string => pendingShardPk(idHash(id) % PENDING_SHARDS);

/** A pending entry's sort key: due time first; a random nonce so no two checkers ever write the same entry. */
export const pendingSk = (dueAt: number, id: string, round: number): string =>
  `${dueKey(dueAt)}#${id}#${round}#${randomBytes(4).toString("hex")}`;

/** The half queue of transaction `id` on `brokerName`. */
export const halfQueue = (brokerName: string, id: string): QueueRef => ({
  topic: RMQ_SYS_TRANS_HALF_TOPIC,
  brokerName,
  queueId: idHash(id) % HALF_QUEUES,
});

/** Every half queue of a broker (retention trims them all). */
export const halfQueuesOf = (brokerName: string): QueueRef[] =>
  Array.from({ length: HALF_QUEUES }, (_, queueId) => ({ topic: RMQ_SYS_TRANS_HALF_TOPIC, brokerName, queueId }));

export const notFound = (id: string): NimbusError =>
  new NimbusError(ErrorCode.QUERY_NOT_FOUND, `no transaction ${id} in this group`);

/** Reads a partition's items into records; undefined when it has no half record. */
export function toRecords(items: Item[]): TransactionRecords | undefined {
  const bySk = new Map(items.map((i) => [String(i.sk), i]));
  const half = bySk.get("half");
  if (half === undefined) return undefined;
  const numbered = (prefix: string) =>
    items.filter((i) => String(i.sk).startsWith(prefix)).map((i) => Number(String(i.sk).slice(prefix.length)));
  const checks = numbered("check:");
  const checkTimes = Math.max(0, ...checks);
  const newestCheck = bySk.get(`check:${checkTimes}`);
  const deliverClaims = numbered("deliver:");
  const newestDeliver = deliverClaims.length === 0 ? undefined : bySk.get(`deliver:${Math.max(...deliverClaims)}`);
  const end = bySk.get("end");
  return {
    half,
    end,
    delivered: bySk.get("delivered"),
    checkTimes,
    lastCheckAt: Number(newestCheck?.claimedAt ?? 0),
    deliveryClaims: deliverClaims.length,
    lastClaimAt: Number((newestDeliver ?? end)?.claimedAt ?? 0),
    pendingSk: String(newestCheck?.pendingSk ?? half.pendingSk),
  };
}

export function realQueue(half: Item): QueueRef {
  return { topic: String(half.topic), brokerName: String(half.brokerName), queueId: Number(half.queueId) };
}

export function halfResponse(id: string, half: Item): HalfMessageResponse {
  return {
    sendStatus: "SEND_OK",
    transactionId: id,
    msgId: id,
    messageQueue: realQueue(half),
    queueOffset: Number(half.halfOffset),
    storeTimestamp: Number(half.storeTimestamp),
  };
}

/** The transaction as the API answers it; the discard's claim (round checkMax + 1) is not a check. */
export function infoOf(id: string, r: TransactionRecords, checkMax: number): TransactionInfo {
  const state = (r.end?.state as TransactionState | undefined) ?? "PENDING";
  return {
    transactionId: id,
    producerGroup: String(r.half.producerGroup),
    state,
    checkTimes: Math.min(r.checkTimes, checkMax),
    messageQueue: realQueue(r.half),
    ...(r.delivered === undefined ? {} : { queueOffset: Number(r.delivered.queueOffset) }),
    storeTimestamp: Number(r.half.storeTimestamp),
  };
}
