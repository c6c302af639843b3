/**
 * @module Binary batches: `POST /send` bodies and `POST /pull` answers as the batch codec's bytes
 * (lib/core/message-codec.ts) instead of JSON with base64 bodies. Content type `application/vnd.nimbus.batch`;
 * JSON stays the default for every client that does not ask (docs/api.md, "Binary batches").
 *
 * A frame (little-endian):
 *
 * | offset | size | field                                                               |
 * | ------ | ---- | ------------------------------------------------------------------- |
 * | 0      | 4    | magic `4E 4D 42 46` ("NMBF")                                        |
 * | 4      | 1    | version, 1                                                          |
 * | 5      | 4    | u32 header length _h_                                               |
 * | 9      | _h_  | header: UTF-8 JSON, the request or answer without its messages      |
 * | 9 + h  | rest | the messages: one batch of the batch codec (CRC32C per message)     |
 *
 * A send's header is the `SendRequest` without its messages' records (`topic`, optional `producerGroup`,
 * `brokerName`, `queueId`, by the same schema as JSON), plus `messages` when any message has a field the
 * record does not hold: one object per record, in order, each a JSON send message without `body`, `tags`,
 * `keys`, `properties` and `flag` (e.g. `delayTimeLevel`). That part is `SendMessageSchema` itself minus
 * those keys, so every field a JSON send message accepts travels in a frame too, with the same checks.
 * Each record carries a message's tags, keys, properties, flag and body (its born timestamp and reconsume
 * times are the broker's to set and are ignored); they are checked by the same schema as JSON's once
 * joined with the header's part. A pull answer's header is
 * the `PullResponse` with, per message, only what the record does not hold (`msgId`, `topic`,
 * `brokerName`, `queueId`, `queueOffset`, `storeTimestamp`), in the batch's order.
 *
 * Decoding checks everything (magic, version, lengths, the header's schema, every record's CRC); bad
 * bytes are a `PARAMETER_ILLEGAL` on the broker (400, nothing written) and a `SYSTEM_ERROR` in the SDK.
 */
import { z } from "zod";
import { ErrorCode, NimbusError } from "../core/errors.js";
import type { MessageRecord } from "../core/message.js";
import { decodeBatch, encodeBatch } from "../core/message-codec.js";
import { MAX_LIST_ITEMS } from "./bounds.js";
import { type PulledMessage, PulledMessageSchema, type PullResponse, PullResponseSchema } from "./endpoints/pull.js";
import { type SendMessage, SendMessageSchema, type SendRequest, SendRequestSchema } from "./endpoints/send.js";

/** The media type of a binary batch frame, in `content-type` (a send) and `accept` (a pull). */
export const BATCH_MEDIA_TYPE = "application/vnd.nimbus.batch";

const FRAME_MAGIC = [0x4e, 0x4d, 0x42, 0x46] as const; // "NMBF"
const FRAME_VERSION = 1;
const FRAME_HEADER_SIZE = 9;

/** True when a `content-type` header is the batch media type (parameters after `;` aside). */
export function isBatchMediaType(header: string | undefined): boolean {
  return header !== undefined && mediaRange(header).type === BATCH_MEDIA_TYPE;
}

/**
 * True when an `accept` header prefers the batch media type: listed by name with a `q` above 0 and no
 * other range with a higher `q` (RFC 9110 §12.5.1). `application/vnd.nimbus.batch;q=0, application/json`
 * is JSON; a tie goes to the batch, which a client names only when it can read it.
 */
export function acceptsBatch(header: string | undefined): boolean {
  if (header === undefined) return false;
  const ranges = header.split(",").map(mediaRange);
  const batch = ranges.find((r) => r.type === BATCH_MEDIA_TYPE);
  if (!batch || batch.q <= 0) return false;
  return ranges.every((r) => r.q <= batch.q);
}

/** One media range of a header: its type (lower case) and its `q` (1 when absent, 0 when malformed). */
function mediaRange(range: string): { type: string; q: number } {
  const [type = "", ...params] = range.split(";").map((p) => p.trim().toLowerCase());
  const qParam = params.find((p) => p.startsWith("q="));
  if (qParam === undefined) return { type, q: 1 };
  const q = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(qParam) ? Number(qParam.slice(2)) : 0;
  return { type, q };
}

/** A send message's fields that a record holds (with `body`); every other field goes in the header. */
const RECORD_FIELDS = { body: true, tags: true, keys: true, properties: true, flag: true } as const;

/** A send message without what its record holds: whatever else a JSON send message accepts. */
const SendMessageRestSchema = SendMessageSchema.omit(RECORD_FIELDS);

/** A send message's non-body fields, checked as JSON's are once record and header are joined. */
const SendMessageMetaSchema = SendMessageSchema.omit({ body: true });

export const SendFrameHeaderSchema = SendRequestSchema.omit({ messages: true })
  .extend({ messages: z.array(SendMessageRestSchema).max(MAX_LIST_ITEMS).optional() })
  .strict();

/** A pulled message's fields the header carries; the rest stands in its record. */
const PulledMetaSchema = PulledMessageSchema.pick({
  msgId: true,
  topic: true,
  brokerName: true,
  queueId: true,
  queueOffset: true,
  storeTimestamp: true,
}).strict();

export const PullFrameHeaderSchema = PullResponseSchema.omit({ messages: true })
  .extend({ messages: z.array(PulledMetaSchema).max(MAX_LIST_ITEMS) })
  .strict();

function encodeFrame(header: unknown, batch: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(FRAME_HEADER_SIZE + head.byteLength + batch.byteLength);
  out.set(FRAME_MAGIC, 0);
  out[4] = FRAME_VERSION;
  new DataView(out.buffer).setUint32(5, head.byteLength, true);
  out.set(head, FRAME_HEADER_SIZE);
  out.set(batch, FRAME_HEADER_SIZE + head.byteLength);
  return out;
}

/** The frame's header (parsed by `schema`) and its messages; `code` is the error a bad frame raises. */
function decodeFrame<S extends z.ZodType>(
  bytes: Uint8Array,
  schema: S,
  code: ErrorCode,
): { header: z.output<S>; records: MessageRecord[] } {
  const bad = (what: string) => new NimbusError(code, `the binary batch is malformed: ${what}`);
  if (bytes.byteLength < FRAME_HEADER_SIZE) throw bad(`${bytes.byteLength} bytes, shorter than a frame header`);
  if (FRAME_MAGIC.some((b, i) => bytes[i] !== b)) throw bad("bad magic (not an NMBF frame)");
  if (bytes[4] !== FRAME_VERSION) throw bad(`unknown version ${bytes[4]}`);
  const headLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(5, true);
  if (FRAME_HEADER_SIZE + headLength > bytes.byteLength) throw bad("the header runs past the end");
  let json: unknown;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(
      bytes.subarray(FRAME_HEADER_SIZE, FRAME_HEADER_SIZE + headLength),
    );
    json = JSON.parse(text);
  } catch {
    throw bad("the header is not UTF-8 JSON");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw bad(parsed.error.issues.map((i) => `header.${i.path.join(".")}: ${i.message}`).join("; "));
  }
  let records: MessageRecord[];
  try {
    records = decodeBatch(bytes.subarray(FRAME_HEADER_SIZE + headLength));
  } catch (err) {
    throw bad(err instanceof Error ? err.message : String(err));
  }
  return { header: parsed.data, records };
}

/** A send as a frame (the SDK's request body). */
export function encodeSendFrame(req: SendRequest): Uint8Array {
  const { messages, ...target } = req;
  const rests = messages.map((m) => {
    const { body: _b, tags: _t, keys: _k, properties: _p, flag: _f, ...rest } = m;
    return z.encode(SendMessageRestSchema, rest);
  });
  const header = rests.some((r) => Object.keys(r).length > 0) ? { ...target, messages: rests } : target;
  const now = Date.now();
  const records = messages.map(
    (m): MessageRecord => ({
      bornTimestamp: now,
      flag: m.flag ?? 0,
      tags: m.tags ?? "",
      keys: m.keys ?? [],
      properties: m.properties ?? {},
      body: m.body,
      reconsumeTimes: 0,
    }),
  );
  return encodeFrame(header, encodeBatch(records));
}

/** A send from a frame (the broker's side): PARAMETER_ILLEGAL on anything malformed. */
export function decodeSendFrame(bytes: Uint8Array): SendRequest {
  const { header, records } = decodeFrame(bytes, SendFrameHeaderSchema, ErrorCode.PARAMETER_ILLEGAL);
  const { messages: rests, ...target } = header;
  if (rests !== undefined && rests.length !== records.length) {
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `the binary batch is malformed: ${records.length} messages for ${rests.length} in the header`,
    );
  }
  const messages = records.map((r, i): SendMessage => {
    // Before the schema, whose record parse would drop it silently: a client never names a property __proto__.
    if (Object.hasOwn(r.properties, "__proto__")) {
      throw new NimbusError(ErrorCode.MESSAGE_ILLEGAL, `message ${i}: a property may not be named __proto__`);
    }
    const meta = SendMessageMetaSchema.safeParse({
      ...(r.tags === "" ? {} : { tags: r.tags }),
      ...(r.keys.length === 0 ? {} : { keys: r.keys }),
      ...(Object.keys(r.properties).length === 0 ? {} : { properties: r.properties }),
      ...(r.flag === 0 ? {} : { flag: r.flag }),
      ...rests?.[i],
    });
    if (!meta.success) {
      const issues = meta.error.issues.map((e) => `messages.${i}.${e.path.join(".")}: ${e.message}`);
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `the binary batch is malformed: ${issues.join("; ")}`);
    }
    return { body: r.body, ...meta.data };
  });
  if (messages.length === 0) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "the binary batch is malformed: no messages");
  }
  return { ...target, messages };
}

/** A pull answer as a frame (the broker's side). */
export function encodePullFrame(res: PullResponse): Uint8Array {
  const { messages, ...rest } = res;
  const header = {
    ...rest,
    messages: messages.map((m) => ({
      msgId: m.msgId,
      topic: m.topic,
      brokerName: m.brokerName,
      queueId: m.queueId,
      queueOffset: m.queueOffset,
      storeTimestamp: m.storeTimestamp,
    })),
  };
  return encodeFrame(header, encodeBatch(messages));
}

/** A pull answer from a frame (the SDK's side): SYSTEM_ERROR on anything malformed. */
export function decodePullFrame(bytes: Uint8Array): PullResponse {
  const { header, records } = decodeFrame(bytes, PullFrameHeaderSchema, ErrorCode.SYSTEM_ERROR);
  if (records.length !== header.messages.length) {
    throw new NimbusError(
      ErrorCode.SYSTEM_ERROR,
      `the binary batch is malformed: ${records.length} messages for ${header.messages.length} in the header`,
    );
  }
  const messages = records.map((r, i): PulledMessage => {
    const meta = header.messages[i] as z.output<typeof PulledMetaSchema>;
    return {
      ...meta,
      tags: r.tags,
      keys: r.keys,
      properties: r.properties,
      body: r.body,
      flag: r.flag,
      bornTimestamp: r.bornTimestamp,
      reconsumeTimes: r.reconsumeTimes,
    };
  });
  return { ...header, messages };
}

/** The binary forms of endpoints, by endpoint id: a request body a broker accepts, an answer it can give. */
export const BINARY_BODIES: Readonly<Record<string, (bytes: Uint8Array) => unknown>> = { send: decodeSendFrame };
export const BINARY_RESPONSES: Readonly<Record<string, (answer: never) => Uint8Array>> = { pull: encodePullFrame };
