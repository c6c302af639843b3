/**
 * @module Receipt handles: what a POP receive hands out with each message and what ack and
 * changeInvisibleDuration take back. A handle names the message's queue and offset, its checkpoint (start
 * offset and the checkpoint's random nonce) and the round it was delivered in; nothing in it is trusted:
 * every use checks it against the stored checkpoint (a forged nonce, an old round, an expired or acked
 * message are INVALID_RECEIPT_HANDLE). Opaque to clients: base64url of a short JSON array.
 */
import { z } from "zod";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MAX_RECEIPT_HANDLE_LENGTH } from "../../protocol/index.js";

export interface ReceiptHandle {
  brokerName: string;
  queueId: number;
  start: number;
  offset: number;
  round: number;
  nonce: string;
  invisibleUntil: number;
}

const VERSION = 1;
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const HandleSchema = z.tuple([
  z.literal(VERSION),
  z.string().regex(/^[%|a-zA-Z0-9_-]{1,127}$/),
  z.number().int().min(0).max(0x7fffffff),
  count,
  count,
  z.number().int().min(1).max(99_999),
  z.string().regex(/^[0-9a-f]{16}$/),
  count,
]);

export function encodeHandle(h: ReceiptHandle): string {
  const fields = [VERSION, h.brokerName, h.queueId, h.start, h.offset, h.round, h.nonce, h.invisibleUntil];
  return Buffer.from(JSON.stringify(fields)).toString("base64url");
}

/** The handle's fields; INVALID_RECEIPT_HANDLE for anything that is not a handle this broker made. */
export function decodeHandle(handle: string): ReceiptHandle {
  const invalid = () => new NimbusError(ErrorCode.INVALID_RECEIPT_HANDLE, "not a receipt handle");
  if (handle.length === 0 || handle.length > MAX_RECEIPT_HANDLE_LENGTH || !/^[A-Za-z0-9_-]+$/.test(handle)) {
    throw invalid();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(handle, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  const fields = HandleSchema.safeParse(parsed);
  if (!fields.success) throw invalid();
  const [, brokerName, queueId, start, offset, round, nonce, invisibleUntil] = fields.data;
  if (offset < start) throw invalid();
  return { brokerName, queueId, start, offset, round, nonce, invisibleUntil };
}
