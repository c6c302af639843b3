/**
 * @module What the dispatcher needs of POP consumption (INTERFACES.md, `Broker.pop` of lib/broker/pop/): receive
 * with an invisibility time, ack by receipt handle, change a handle's invisibility (the retry backoff), and
 * forward one message to `%DLQ%<group>`. Declared here as the dispatcher's port so that it depends on the
 * interface, not on the service's folder.
 */
import type { DeliverableMessage } from "./delivery.js";

export interface PopFilter {
  type: "TAG" | "SQL92";
  expression: string;
}

export interface PopReceive {
  group: string;
  topic: string;
  filter: PopFilter;
  /** 1..32 */
  maxMessages: number;
  invisibleMs: number;
  longPollMs: number;
  clientId?: string;
}

export interface PoppedMessage extends DeliverableMessage {
  receiptHandle: string;
  /** 1 on the first delivery. */
  deliveryAttempt: number;
  invisibleUntil: number;
}

export interface PopPort {
  receive(req: PopReceive, signal?: AbortSignal): Promise<{ messages: PoppedMessage[] }>;
  ack(
    group: string,
    topic: string,
    receiptHandles: string[],
  ): Promise<{ entries: { receiptHandle: string; code: "OK" | "INVALID_RECEIPT_HANDLE" }[] }>;
  changeInvisibleDuration(
    group: string,
    topic: string,
    receiptHandle: string,
    invisibleMs: number,
  ): Promise<{ receiptHandle: string; invisibleUntil: number }>;
  /** Dead-letters a received message; `properties` are added to the dead letter (why it failed). */
  forwardToDeadLetter(
    group: string,
    topic: string,
    receiptHandle: string,
    properties?: Readonly<Record<string, string>>,
  ): Promise<void>;
  /** When a message of the group this process knows of is receivable again (after an empty receive). */
  nextDeadline?(group: string, topic: string): Promise<number | undefined>;
}
