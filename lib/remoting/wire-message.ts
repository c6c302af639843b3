/**
 * @module Messages as RocketMQ's remoting protocol carries them: properties as one string (`name\u0001value`
 * pairs joined by `\u0002`), a batch's body (`MessageDecoder.encodeMessages`), and the stored-message encoding a
 * pull answer holds (`MessageDecoder.decodes`: TOTALSIZE ... PROPERTIES), with a commit-log offset of Nimbus' own
 * making (`physicalOffset`: the queue, not a file position) and the offset message id made of it.
 */
import { crc32 } from "node:zlib";
import { MessageConst } from "../core/message.js";
import { offsetMsgId as coreOffsetMsgId, physicalOffset, physicalOffsetHigh } from "../core/offset-message-id.js";
import { MAX_BATCH_MESSAGES, type PulledMessage } from "../protocol/index.js";
import { badHeader } from "./codes.js";

export { physicalOffset };

const NAME_VALUE = "\u0001";
const SEPARATOR = "\u0002";
const MAGIC_CODE = -626843481;
/** The batch body's entries, at most: Nimbus' batch limit, and a little more so the broker names the excess. */
const MAX_BATCH_ENTRIES = MAX_BATCH_MESSAGES + 1;

export const SysFlag = {
  COMPRESSED: 0x1,
  MULTI_TAGS: 0x2,
  TRANSACTION_PREPARED: 0x4,
  TRANSACTION_COMMIT: 0x8,
  TRANSACTION_ROLLBACK: 0xc,
  BORNHOST_V6: 0x10,
  STOREHOST_V6: 0x20,
} as const;

export function propertiesString(properties: Readonly<Record<string, string>>): string {
  let out = "";
  let first = true;
  for (const [k, v] of Object.entries(properties)) {
    out += first ? `${k}${NAME_VALUE}${v}` : `${SEPARATOR}${k}${NAME_VALUE}${v}`;
    first = false;
  }
  return out;
}

/**
 * A message's wire properties as one string: its own, with tags and keys as RocketMQ keeps them (TAGS, KEYS: in
 * their place when the properties hold them already, else last), in one pass over the properties.
 */
function wirePropertiesString(m: Pick<PulledMessage, "tags" | "keys" | "properties">): string {
  let tags = m.tags !== "";
  let keys = m.keys.length > 0;
  let out = "";
  for (const [k, own] of Object.entries(m.properties)) {
    let v = own;
    if (tags && k === MessageConst.TAGS) {
      v = m.tags;
      tags = false;
    } else if (keys && k === MessageConst.KEYS) {
      v = m.keys.join(MessageConst.KEY_SEPARATOR);
      keys = false;
    }
    // Every pair has its NAME_VALUE: the string is empty only before the first one.
    out += `${out.length === 0 ? "" : SEPARATOR}${k}${NAME_VALUE}${v}`;
  }
  if (tags) out += `${out.length === 0 ? "" : SEPARATOR}${MessageConst.TAGS}${NAME_VALUE}${m.tags}`;
  if (keys)
    out += `${out.length === 0 ? "" : SEPARATOR}${MessageConst.KEYS}${NAME_VALUE}${m.keys.join(MessageConst.KEY_SEPARATOR)}`;
  return out;
}

/** RocketMQ's string2messageProperties: malformed pairs are skipped, as RocketMQ skips them. */
export function parseProperties(s: string | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (s === undefined) return out;
  for (const pair of s.split(SEPARATOR)) {
    const at = pair.indexOf(NAME_VALUE);
    if (at <= 0 || at >= pair.length - 1) continue;
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

export interface BatchEntry {
  flag: number;
  body: Uint8Array;
  properties: Record<string, string>;
}

/** A SEND_BATCH_MESSAGE body: `TOTALSIZE MAGIC BODYCRC FLAG BODYLEN BODY PROPLEN PROPS` per message. */
export function decodeBatch(body: Uint8Array): BatchEntry[] {
  const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const out: BatchEntry[] = [];
  let at = 0;
  while (at < b.byteLength) {
    if (out.length >= MAX_BATCH_ENTRIES) throw badHeader(`a batch holds at most ${MAX_BATCH_MESSAGES} messages`);
    if (at + 20 > b.byteLength) throw badHeader("a batch entry cut short");
    const total = b.readInt32BE(at);
    if (total < 22 || at + total > b.byteLength) throw badHeader("a batch entry's size is past the batch");
    const flag = b.readInt32BE(at + 12);
    const bodyLength = b.readInt32BE(at + 16);
    if (bodyLength < 0 || 20 + bodyLength + 2 > total) throw badHeader("a batch entry's body is past the entry");
    const entryBody = new Uint8Array(b.subarray(at + 20, at + 20 + bodyLength));
    const propsLength = b.readUInt16BE(at + 20 + bodyLength);
    if (20 + bodyLength + 2 + propsLength > total) throw badHeader("a batch entry's properties are past the entry");
    const start = at + 22 + bodyLength;
    const properties = parseProperties(b.toString("utf8", start, start + propsLength));
    out.push({ flag, body: entryBody, properties });
    at += total;
  }
  if (out.length === 0) throw badHeader("a batch without messages");
  return out;
}

export interface HostAddress {
  /** Four bytes of an IPv4 address (other hosts are written as 127.0.0.1). */
  ip: Uint8Array;
  port: number;
}

export function hostAddress(host: string, port: number): HostAddress {
  const parts = host.split(".").map(Number);
  const ip =
    parts.length === 4 && parts.every((p) => Number.isInteger(p) && p >= 0 && p <= 255)
      ? Uint8Array.from(parts)
      : Uint8Array.from([127, 0, 0, 1]);
  return { ip, port };
}

/** RocketMQ's offset message id of a message stored at `store` (lib/core/offset-message-id.ts). */
export function offsetMsgId(store: HostAddress, offset: bigint): string {
  return coreOffsetMsgId(store.ip, store.port, offset);
}

export interface StoredEncoding {
  storeHost: HostAddress;
  bornHost: HostAddress;
}

/** One message in RocketMQ's stored-message encoding (IPv4 hosts, body uncompressed). */
export function encodeStored(m: PulledMessage, hosts: StoredEncoding): Buffer {
  return encodeStoredMessages([m], hosts, Number.POSITIVE_INFINITY).body;
}

/** The fields of a stored message before its body, in bytes (TOTALSIZE ... BODYLEN). */
export const FIXED_BEFORE_BODY = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4;

/**
 * Messages of one queue back to back in the stored-message encoding (`MessageDecoder.decodes`), in one buffer:
 * the first `count` of them, those that fit `maxBytes` (the first always, however large). The queue's names, the
 * high half of its commit-log offsets and each message's size are worked out once, before one allocation.
 */
export function encodeStoredMessages(
  messages: readonly PulledMessage[],
  hosts: StoredEncoding,
  maxBytes: number,
): { body: Buffer; count: number } {
  const first = messages[0];
  if (first === undefined) return { body: Buffer.alloc(0), count: 0 };
  const topic = Buffer.from(first.topic, "utf8");
  const high = physicalOffsetHigh(first.topic, first.brokerName, first.queueId);
  const properties: string[] = [];
  const sizes: number[] = [];
  let bytes = 0;
  for (const m of messages) {
    if (m.topic !== first.topic || m.brokerName !== first.brokerName || m.queueId !== first.queueId)
      throw new Error("encodeStoredMessages takes the messages of one queue");
    const props = wirePropertiesString(m);
    const size = FIXED_BEFORE_BODY + m.body.byteLength + 1 + topic.byteLength + 2 + Buffer.byteLength(props, "utf8");
    if (sizes.length > 0 && bytes + size > maxBytes) break;
    properties.push(props);
    sizes.push(size);
    bytes += size;
  }
  const out = Buffer.allocUnsafe(bytes);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let at = 0;
  for (const [i, size] of sizes.entries()) {
    const m = messages[i] as PulledMessage;
    const body = Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength);
    const head: StoredHead = {
      size,
      bodyCrc: crc32(body),
      queueId: m.queueId,
      flag: m.flag,
      queueOffset: m.queueOffset,
      high,
      bornTimestamp: m.bornTimestamp,
      storeTimestamp: m.storeTimestamp,
      reconsumeTimes: m.reconsumeTimes,
      bodyLength: body.byteLength,
    };
    at = writeStoredHead(view, at, head, hosts);
    at += body.copy(out, at);
    at = out.writeUInt8(topic.byteLength, at);
    at += topic.copy(out, at);
    const propsAt = at + 2;
    const propsLength = out.write(properties[i] as string, propsAt, "utf8");
    out.writeUInt16BE(propsLength, at);
    at = propsAt + propsLength;
  }
  return { body: out, count: sizes.length };
}

/** The numbers of a stored message's fields before its body. */
export interface StoredHead {
  /** Every byte of the stored message (TOTALSIZE). */
  size: number;
  /** zlib's CRC32 of the body (BODYCRC). */
  bodyCrc: number;
  queueId: number;
  flag: number;
  queueOffset: number;
  /** The high half of the queue's commit-log offsets (`physicalOffsetHigh`). */
  high: number;
  bornTimestamp: number;
  storeTimestamp: number;
  reconsumeTimes: number;
  bodyLength: number;
}

/**
 * A stored message's fields before its body (TOTALSIZE ... BODYLEN, `FIXED_BEFORE_BODY` bytes), written at `at` of
 * `out` (a view of the answer's buffer: a DataView's writes cost a fifth of a Buffer's checked ones): answers where
 * its body goes.
 */
export function writeStoredHead(out: DataView, at: number, head: StoredHead, hosts: StoredEncoding): number {
  out.setInt32(at, head.size);
  out.setInt32(at + 4, MAGIC_CODE);
  out.setInt32(at + 8, head.bodyCrc & 0x7fffffff);
  out.setInt32(at + 12, head.queueId);
  out.setInt32(at + 16, head.flag | 0);
  setInt64(out, at + 20, head.queueOffset);
  // PHYSICALOFFSET: the queue's high half, then the offset's low 32 bits.
  out.setInt32(at + 28, head.high);
  out.setUint32(at + 32, head.queueOffset >>> 0);
  out.setInt32(at + 36, 0);
  setInt64(out, at + 40, head.bornTimestamp);
  setHost(out, at + 48, hosts.bornHost);
  setInt64(out, at + 56, head.storeTimestamp);
  setHost(out, at + 64, hosts.storeHost);
  out.setInt32(at + 72, head.reconsumeTimes);
  setInt64(out, at + 76, 0);
  out.setInt32(at + 84, head.bodyLength);
  return at + FIXED_BEFORE_BODY;
}

function setHost(out: DataView, at: number, host: HostAddress): void {
  for (let i = 0; i < 4; i++) out.setUint8(at + i, host.ip[i] as number);
  out.setInt32(at + 4, host.port);
}

/** A safe integer as a big-endian int64 (two's complement), without a BigInt. */
function setInt64(out: DataView, at: number, value: number): void {
  out.setInt32(at, Math.floor(value / 0x1_0000_0000));
  out.setUint32(at + 4, value >>> 0);
}
