/**
 * @module What a client may put in a message's properties, whatever door the send came through (HTTP JSON, a
 * binary batch, a half message, gRPC): its own properties and a well-formed UNIQ_KEY (the message id, kept so a
 * retried send keeps its ids) and `DELAY`/`TIMER_*` (checked by the delay levels and the timer limits), never the
 * properties the broker sets (tags, keys, the transaction, retry and offset markers), no property named
 * `__proto__`, and no control characters in a property's name or value, as RocketMQ's gRPC proxy refuses them (a
 * value with RocketMQ's property separators, \u0001 and \u0002, could not even reach a RocketMQ 4.x client).
 */
import { hasControlCharacter } from "../../core/control-characters.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MessageConst, type MessageRecord } from "../../core/message.js";

/** Properties only the broker writes: a client setting one would forge what the broker vouches for. */
export const BROKER_SET_PROPERTIES: readonly string[] = [
  MessageConst.TAGS,
  MessageConst.KEYS,
  MessageConst.TRAN_MSG,
  MessageConst.PGROUP,
  MessageConst.REAL_TOPIC,
  MessageConst.REAL_QID,
  MessageConst.MIN_OFFSET,
  MessageConst.MAX_OFFSET,
  MessageConst.TRANSACTION_PREPARED_QUEUE_OFFSET,
  MessageConst.TRANSACTION_CHECK_TIMES,
  MessageConst.RETRY_TOPIC,
  MessageConst.ORIGIN_MESSAGE_ID,
  MessageConst.RECONSUME_TIME,
  MessageConst.MAX_RECONSUME_TIMES,
];

/** A message id: what RocketMQ's clients make (32 hex digits), and at most what a transaction id may be. */
const UNIQ_KEY_PATTERN = /^[0-9A-Za-z_-]{1,128}$/;

const illegal = (message: string) => new NimbusError(ErrorCode.MESSAGE_ILLEGAL, message);

/** MESSAGE_ILLEGAL unless message `i`'s client-set properties are allowed. */
export function checkClientProperties(i: number, properties: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(properties)) {
    if (BROKER_SET_PROPERTIES.includes(name)) throw illegal(`message ${i}: property ${name} is set by the broker`);
    if (hasControlCharacter(name)) throw illegal(`message ${i}: a property name has a control character`);
    // JSON requests refuse it when decoded; a binary batch keeps it as data, which a JSON pull would then drop.
    if (name === "__proto__") throw illegal(`message ${i}: a property may not be named __proto__`);
    if (hasControlCharacter(value)) throw illegal(`message ${i}: a property value has a control character`);
  }
  const id = properties[MessageConst.UNIQ_KEY];
  // A malformed id is a bad parameter (as a bad transaction id, which a half message's UNIQ_KEY becomes).
  if (id !== undefined && !UNIQ_KEY_PATTERN.test(id))
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `message ${i}: UNIQ_KEY is 1 to 128 letters, digits, - and _ (a message id)`,
    );
}

/** MESSAGE_ILLEGAL when two messages of one batch carry the same UNIQ_KEY (one id, one message). */
export function refuseDuplicateIds(records: readonly MessageRecord[]): void {
  const seen = new Set<string>();
  for (const [i, r] of records.entries()) {
    const id = r.properties[MessageConst.UNIQ_KEY] ?? "";
    if (seen.has(id)) throw illegal(`message ${i}: UNIQ_KEY ${id} is another message's of this batch`);
    seen.add(id);
  }
}
