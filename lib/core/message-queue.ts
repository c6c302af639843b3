/**
 * @module RocketMQ's `MessageQueue`: one queue of a topic on one broker, and the order RocketMQ sorts
 * queues in (topic, then broker name, then queue id). Allocation strategies depend on every client
 * sorting the same way, so the order must match Java's exactly.
 */
import { ErrorCode, NimbusError } from "./errors.js";

/** Separates the parts of `key()`. Topic and broker names cannot contain it (see `names.ts`). */
const KEY_SEPARATOR = "#";
const MAX_QUEUE_ID = 0x7fffffff; // Java's int

/** Java's `String.compareTo` sign: JS `<` on strings compares UTF-16 code units, as Java does. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function illegal(message: string): NimbusError {
  return new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
}

/**
 * An immutable queue address. The constructor checks only what the key and the order need (no `#` in
 * names, a queue id from 0 to 2^31-1); name rules are `names.ts`' job.
 *
 * @example
 * const queues = [new MessageQueue("T", "broker-b", 0), new MessageQueue("T", "broker-a", 10)];
 * queues.sort(MessageQueue.compare); // broker-a first
 */
export class MessageQueue {
  readonly topic: string;
  readonly brokerName: string;
  readonly queueId: number;

  constructor(topic: string, brokerName: string, queueId: number) {
    if (typeof topic !== "string" || topic.includes(KEY_SEPARATOR)) {
      throw illegal(`The topic of a message queue must be a string without '#': ${String(topic)}`);
    }
    if (typeof brokerName !== "string" || brokerName.includes(KEY_SEPARATOR)) {
      throw illegal(`The brokerName of a message queue must be a string without '#': ${String(brokerName)}`);
    }
    if (!Number.isInteger(queueId) || queueId < 0 || queueId > MAX_QUEUE_ID) {
      throw illegal(`The queueId of a message queue must be an integer from 0 to ${MAX_QUEUE_ID}: ${queueId}`);
    }
    this.topic = topic;
    this.brokerName = brokerName;
    this.queueId = queueId;
  }

  /** Parses a `key()`. Throws `PARAMETER_ILLEGAL` on anything `key()` cannot have produced. */
  static fromKey(key: string): MessageQueue {
    const parts = key.split(KEY_SEPARATOR);
    const id = parts[2];
    if (parts.length !== 3 || id === undefined || !/^(0|[1-9][0-9]{0,9})$/.test(id)) {
      throw illegal(`Not a message queue key (topic#brokerName#queueId): ${key}`);
    }
    return new MessageQueue(parts[0]!, parts[1]!, Number(id));
  }

  /** Negative, zero or positive as `a` sorts before, with or after `b`; pass it to `Array.prototype.sort`. */
  static compare(this: void, a: MessageQueue, b: MessageQueue): number {
    return compareStrings(a.topic, b.topic) || compareStrings(a.brokerName, b.brokerName) || a.queueId - b.queueId;
  }

  compareTo(other: MessageQueue): number {
    return MessageQueue.compare(this, other);
  }

  equals(other: unknown): boolean {
    return (
      other instanceof MessageQueue &&
      other.topic === this.topic &&
      other.brokerName === this.brokerName &&
      other.queueId === this.queueId
    );
  }

  /** `topic#brokerName#queueId`: one string per queue, stable across processes (map keys, table keys). */
  key(): string {
    return `${this.topic}${KEY_SEPARATOR}${this.brokerName}${KEY_SEPARATOR}${this.queueId}`;
  }

  toString(): string {
    return `MessageQueue [topic=${this.topic}, brokerName=${this.brokerName}, queueId=${this.queueId}]`;
  }
}
