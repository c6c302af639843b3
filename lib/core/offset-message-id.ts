/**
 * @module RocketMQ's offset message id (`offsetMsgId`, what a 4.x client's SendResult and mqadmin's queryMsgById
 * name): the store host (IPv4 and port) and a commit-log offset, 32 hex digits. Nimbus' queue log has no commit
 * log, so the offset is made from where the message is: 16 bits of its topic's hash, 5 of its broker's, its queue
 * id (10 bits) and the low 32 bits of its queue offset. Distinct messages of a deployment rarely share one, the
 * id of a message stays the same on every read, and the id says where the message is (up to the hashes: a reader
 * tries the topics and brokers whose hashes match).
 */

/** FNV-1a over UTF-16 code units (32 bits). */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const TOPIC_HASH_BITS = 0xffff;
const BROKER_HASH_BITS = 0x1f;
const QUEUE_ID_BITS = 0x3ff;

/** The commit-log offset a message of `topic`'s queue `queueId` of `brokerName` at `queueOffset` is named by. */
export function physicalOffset(topic: string, brokerName: string, queueId: number, queueOffset: number): bigint {
  return (BigInt(physicalOffsetHigh(topic, brokerName, queueId)) << 32n) | BigInt(queueOffset >>> 0);
}

/**
 * The high 32 bits of every commit-log offset of `topic`'s queue `queueId` of `brokerName` (a non-negative int32:
 * 16 bits of the topic's hash, 5 of the broker's, 10 of the queue id); the low 32 are the queue offset's.
 */
export function physicalOffsetHigh(topic: string, brokerName: string, queueId: number): number {
  return (
    ((fnv(topic) & TOPIC_HASH_BITS) << 15) | ((fnv(brokerName) & BROKER_HASH_BITS) << 10) | (queueId & QUEUE_ID_BITS)
  );
}

/** What a commit-log offset of physicalOffset's making says: the queue and offset, and hashes to match names to. */
export interface OffsetPlace {
  queueId: number;
  /** The low 32 bits of the queue offset (a queue past 2^32 messages wraps). */
  queueOffset: number;
  /** Whether `topic` may be the message's topic (its hash matches). */
  topicMatches(topic: string): boolean;
  /** Whether `brokerName` may be the message's broker (its hash matches). */
  brokerMatches(brokerName: string): boolean;
}

export function offsetPlace(offset: bigint): OffsetPlace {
  const topicHash = Number((offset >> 47n) & BigInt(TOPIC_HASH_BITS));
  const brokerHash = Number((offset >> 42n) & BigInt(BROKER_HASH_BITS));
  return {
    queueId: Number((offset >> 32n) & BigInt(QUEUE_ID_BITS)),
    queueOffset: Number(offset & 0xffffffffn),
    topicMatches: (topic) => (fnv(topic) & TOPIC_HASH_BITS) === topicHash,
    brokerMatches: (brokerName) => (fnv(brokerName) & BROKER_HASH_BITS) === brokerHash,
  };
}

/** The offset message id of a store host (four IPv4 bytes and a port) and a commit-log offset. */
export function offsetMsgId(ip: Uint8Array, port: number, offset: bigint): string {
  const bytes = Buffer.alloc(16);
  bytes.set(ip.subarray(0, 4), 0);
  bytes.writeInt32BE(port | 0, 4);
  bytes.writeBigInt64BE(BigInt.asIntN(64, offset), 8);
  return bytes.toString("hex").toUpperCase();
}

/**
 * The commit-log offset an offset message id carries, or undefined when the text is not one: 32 hex digits whose
 * port field is a port (0 to 65535). A UNIQ_KEY has the same length, but there the same bytes hold the producer's
 * pid and a hash, so it reads as an offset id only when its pid is 0 (1 in 65,536 processes); a caller that finds
 * nothing there falls back to the UNIQ_KEY.
 */
export function parseOffsetMsgId(id: string): bigint | undefined {
  if (!/^[0-9a-fA-F]{32}$/.test(id)) return undefined;
  const bytes = Uint8Array.from({ length: 16 }, (_, i) => Number.parseInt(id.slice(2 * i, 2 * i + 2), 16));
  const view = new DataView(bytes.buffer);
  const port = view.getInt32(4);
  if (port < 0 || port > 0xffff) return undefined;
  return view.getBigInt64(8);
}
