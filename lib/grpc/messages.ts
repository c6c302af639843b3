/**
 * @module A RocketMQ 5 `Message` as a Nimbus message and back, the way RocketMQ's proxy converts them:
 * the message id is `UNIQ_KEY`, a FIFO message's group is `__SHARDINGKEY`, a delay message's delivery
 * timestamp is `TIMER_DELIVER_MS`, tag and keys are the message's own; user properties are every property
 * that is not one of RocketMQ's system property names. So a message sent over gRPC is the same stored
 * message as one sent over HTTP, and each protocol reads the other's.
 */
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { MessageConst, SYSTEM_PROPERTY_NAMES } from "../core/message.js";
import { MAX_BODY_BYTES, type PulledMessage, type SendMessage } from "../protocol/index.js";
import { Refused } from "./codes.js";
import { fromMs, type MessageType, type Seconds, toMs, type WireMessage } from "./wire.js";

/** What a client may send: RocketMQ 5's message types Nimbus serves. */
export type SendType = "NORMAL" | "FIFO" | "DELAY" | "TRANSACTION";

export interface DecodedSend {
  message: SendMessage;
  type: SendType;
  /** A FIFO message's group. */
  messageGroup?: string;
}

/** The type a message declares, checked against the fields it carries (RocketMQ's MESSAGE_PROPERTY_CONFLICT_WITH_TYPE). */
function sendType(m: WireMessage): SendType {
  const sys = m.systemProperties;
  const hasGroup = (sys.messageGroup ?? "") !== "";
  const hasDelivery = sys.deliveryTimestamp !== undefined;
  const declared: MessageType =
    sys.messageType === "MESSAGE_TYPE_UNSPECIFIED"
      ? hasGroup
        ? "FIFO"
        : hasDelivery
          ? "DELAY"
          : "NORMAL"
      : sys.messageType;
  if (declared === "LITE" || declared === "PRIORITY" || sys.liteTopic !== undefined || sys.priority !== undefined)
    throw new Refused(
      "UNSUPPORTED",
      `${declared === "PRIORITY" ? "priority" : "lite topic"} messages are not served by Nimbus`,
    );
  const conflict = (why: string) => new Refused("MESSAGE_PROPERTY_CONFLICT_WITH_TYPE", `a ${declared} message ${why}`);
  if (declared === "FIFO" && !hasGroup) throw conflict("needs a message_group");
  if (declared !== "FIFO" && hasGroup) throw conflict("has no message_group");
  if (declared === "DELAY" && !hasDelivery) throw conflict("needs a delivery_timestamp");
  if (declared !== "DELAY" && hasDelivery) throw conflict("has no delivery_timestamp");
  return declared;
}

function body(m: WireMessage): Uint8Array {
  if (m.systemProperties.bodyEncoding !== "GZIP") return m.body;
  try {
    return gunzipSync(m.body, { maxOutputLength: MAX_BODY_BYTES });
  } catch {
    throw new Refused("MESSAGE_CORRUPTED", `a GZIP body that does not inflate to at most ${MAX_BODY_BYTES} bytes`);
  }
}

/**
 * One message of a SendMessage request, as the broker's send takes it. `asSent`: its user properties as read from
 * the wire (lib/grpc/wire-properties.ts), which keep what the decoded map lost; the broker checks them as it
 * checks every door's.
 */
export function decodeSend(m: WireMessage, asSent?: [string, string][]): DecodedSend {
  const type = sendType(m);
  const sys = m.systemProperties;
  const given = asSent ?? Object.entries(m.userProperties);
  for (const [name] of given) {
    if (SYSTEM_PROPERTY_NAMES.has(name))
      throw new Refused("BAD_REQUEST", `user property ${name} is one of RocketMQ's system property names`);
  }
  // Own data properties, `__proto__` included, for the broker's check to see.
  const properties: Record<string, string> = Object.fromEntries(given);
  if (sys.messageId !== "") properties[MessageConst.UNIQ_KEY] = sys.messageId;
  if (sys.messageGroup !== undefined && sys.messageGroup !== "")
    properties[MessageConst.SHARDING_KEY] = sys.messageGroup;
  if (sys.deliveryTimestamp !== undefined)
    properties[MessageConst.TIMER_DELIVER_MS] = String(toMs(sys.deliveryTimestamp));
  // Optional fields set only when present, not spread in (V8 copies a spread through a generic path).
  const message: SendMessage = { body: body(m), properties };
  if (sys.tag !== undefined && sys.tag !== "") message.tags = sys.tag;
  if (sys.keys.length > 0) message.keys = sys.keys;
  const decoded: DecodedSend = { message, type };
  if (type === "FIFO" && sys.messageGroup) decoded.messageGroup = sys.messageGroup;
  return decoded;
}

/** The type a stored message reads as: transactional, FIFO (a group), delayed (a delivery time), or normal. */
export function storedType(properties: Readonly<Record<string, string>>): SendType {
  if (properties[MessageConst.TRAN_MSG] === "true") return "TRANSACTION";
  if (properties[MessageConst.SHARDING_KEY] !== undefined) return "FIFO";
  if (properties[MessageConst.TIMER_DELIVER_MS] !== undefined) return "DELAY";
  return "NORMAL";
}

/** What a POP receive adds to a message (receipt, attempt, invisibility). */
export interface Delivery {
  receiptHandle: string;
  deliveryAttempt: number;
  invisibleMs?: number | undefined;
}

/**
 * The body's digest, which every RocketMQ 5 client checks on each received message: MD5 as upper-case hex.
 * Not CRC32: the clients disagree on how it is written (the Java client compares upper-case hex, the Node.js
 * client 1.0.8 an unsigned decimal) and each treats the other form as a corrupted message (the Java
 * PushConsumer nacks it, again and again). Both write MD5 and SHA-1 the same way.
 */
export const bodyDigest = (b: Uint8Array) => ({
  type: "MD5" as const,
  checksum: createHash("md5").update(b).digest("hex").toUpperCase(),
});

/** A received message's `SystemProperties`, as the service's codec takes them (enums by name). */
interface ReceivedSystemProperties {
  tag?: string;
  keys: string[];
  messageId: string;
  bodyDigest: ReturnType<typeof bodyDigest>;
  bodyEncoding: "IDENTITY";
  messageType: SendType;
  bornTimestamp: Seconds;
  bornHost: string;
  storeTimestamp: Seconds;
  storeHost: string;
  deliveryTimestamp?: Seconds;
  queueId: number;
  queueOffset: number;
  messageGroup?: string;
  receiptHandle?: string;
  deliveryAttempt?: number;
  invisibleDuration?: Seconds;
}

/**
 * A stored message as a RocketMQ 5 `Message` (received, or carried by a transaction check-back). Built field by
 * field, the optional ones set only when present (no object spread: V8 copies those through a generic path).
 */
export function encodeMessage(m: PulledMessage, delivery?: Delivery) {
  const p = m.properties;
  const userProperties: Record<string, string> = {};
  for (const k of Object.keys(p)) {
    if (SYSTEM_PROPERTY_NAMES.has(k)) continue;
    // Assigning "__proto__" would set the prototype: define it as a plain entry instead.
    if (k === "__proto__")
      Object.defineProperty(userProperties, k, { value: p[k], enumerable: true, writable: true, configurable: true });
    else userProperties[k] = p[k] as string;
  }
  const deliverAt = Number(p[MessageConst.TIMER_DELIVER_MS]);
  const group = p[MessageConst.SHARDING_KEY];
  const systemProperties: ReceivedSystemProperties = {
    keys: m.keys,
    messageId: p[MessageConst.UNIQ_KEY] ?? m.msgId,
    bodyDigest: bodyDigest(m.body),
    bodyEncoding: "IDENTITY",
    messageType: storedType(p),
    bornTimestamp: fromMs(m.bornTimestamp),
    bornHost: "",
    storeTimestamp: fromMs(m.storeTimestamp),
    storeHost: m.brokerName,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
  };
  if (m.tags !== "") systemProperties.tag = m.tags;
  if (Number.isFinite(deliverAt)) systemProperties.deliveryTimestamp = fromMs(deliverAt);
  if (group !== undefined) systemProperties.messageGroup = group;
  if (delivery) {
    systemProperties.receiptHandle = delivery.receiptHandle;
    systemProperties.deliveryAttempt = delivery.deliveryAttempt;
    if (delivery.invisibleMs !== undefined) systemProperties.invisibleDuration = fromMs(delivery.invisibleMs);
  }
  return {
    topic: { resourceNamespace: "", name: m.topic },
    userProperties,
    systemProperties,
    body: Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength),
  };
}
