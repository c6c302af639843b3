/**
 * @module What a send does before any request: RocketMQ's message checks (`Validators.checkMessage`, `batch()`),
 * the UNIQ_KEY set once, the wire messages; and which failures a send may retry on another broker.
 */
import { ErrorCode, isNimbusError, NimbusError } from "../../core/errors.js";
import { MessageConst } from "../../core/message.js";
import { newMessageId } from "../../core/message-id-node.js";
import { validateUserTopic } from "../../core/names.js";
import { HTTP_STATUS, MAX_BODY_BYTES } from "../../protocol/index.js";
import type { Message } from "../message.js";
import type { SendMessage } from "../transport/index.js";

/** A send's messages, checked and in their wire form, and their one topic. */
export type Prepared = { topic: string; wire: SendMessage[] };

/**
 * Busy, network failures and timeouts (the transport's SYSTEM_BUSY), and every code answered with a 5xx.
 * Bad requests, NO_PERMISSION and too-large batches fail the same way on every broker.
 */
export function isRetryable(err: unknown): boolean {
  return isNimbusError(err) && (err.code === ErrorCode.SYSTEM_BUSY || HTTP_STATUS[err.code] >= 500);
}

/** Checks messages as RocketMQ's `Validators.checkMessage` and `batch()` do, sets UNIQ_KEY, and makes wire messages. */
export function prepare(msg: Message | Message[]): Prepared {
  const msgs = Array.isArray(msg) ? msg : [msg];
  const topic = msgs[0]?.topic;
  if (topic === undefined) throw new NimbusError(ErrorCode.MESSAGE_ILLEGAL, "a batch holds at least one message");
  validateUserTopic(topic);
  const wire = msgs.map((m): SendMessage => {
    if (m.topic !== topic) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "The topic of the messages in one batch should be the same");
    }
    if (m.body.byteLength === 0) throw new NimbusError(ErrorCode.MESSAGE_ILLEGAL, "the message body length is zero");
    if (m.body.byteLength > MAX_BODY_BYTES) {
      throw new NimbusError(
        ErrorCode.MESSAGE_BODY_TOO_LARGE,
        `the message body size over max value, MAX: ${MAX_BODY_BYTES}`,
      );
    }
    // Set once: a retry, or a second send of the same Message object, keeps the id (deduplicable).
    m.properties[MessageConst.UNIQ_KEY] ??= newMessageId();
    return {
      body: m.body,
      ...(m.tags === "" ? {} : { tags: m.tags }),
      ...(m.keys.length === 0 ? {} : { keys: m.keys }),
      properties: { ...m.properties },
      ...(m.flag === 0 ? {} : { flag: m.flag }),
    };
  });
  return { topic, wire };
}
