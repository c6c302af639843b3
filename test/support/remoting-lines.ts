/**
 * @module What the Java programs of test/interop (the remoting client's Interop.java, the Spring application)
 * print, read back: `sent <msgId> <offsetMsgId> <brokerName> <queueId> <queueOffset>` for a send and
 * `msg <json>` for a consumed message; and the check that a message as a remoting client read it equals the
 * message as HTTP reads it, field by field.
 */
import assert from "node:assert/strict";
import type { PulledMessage } from "../../lib/protocol/index.js";

export interface Sent {
  msgId: string;
  offsetMsgId: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
}

export const sentLines = (lines: string[]): Sent[] =>
  lines
    .filter((l) => l.startsWith("sent "))
    .map((l) => {
      const [, msgId = "", offsetMsgId = "", brokerName = "", queueId = "", queueOffset = ""] = l.split(" ");
      return { msgId, offsetMsgId, brokerName, queueId: Number(queueId), queueOffset: Number(queueOffset) };
    });

export interface Consumed {
  msgId: string;
  topic: string;
  tags: string | null;
  keys: string | null;
  body: string;
  brokerName: string;
  queueId: number;
  queueOffset: number;
  bornTimestamp: number;
  storeTimestamp: number;
  reconsumeTimes: number;
  flag: number;
  properties: Record<string, string>;
}

export const consumedLines = (lines: string[]): Consumed[] =>
  lines.filter((l) => l.startsWith("msg ")).map((l) => JSON.parse(l.slice(4)) as Consumed);

/** A message as a remoting client read it equals the message as HTTP reads it, field by field. */
export function assertSameAsHttp(read: Consumed, stored: PulledMessage): void {
  assert.equal(read.msgId, stored.msgId);
  assert.equal(read.topic, stored.topic);
  assert.equal(read.tags ?? "", stored.tags);
  assert.equal(read.keys ?? "", stored.keys.join(" "));
  assert.equal(read.body, new TextDecoder().decode(stored.body));
  assert.equal(read.brokerName, stored.brokerName);
  assert.equal(read.queueId, stored.queueId);
  assert.equal(read.queueOffset, stored.queueOffset);
  assert.equal(read.bornTimestamp, stored.bornTimestamp);
  assert.equal(read.storeTimestamp, stored.storeTimestamp);
  assert.equal(read.reconsumeTimes, stored.reconsumeTimes);
  assert.equal(read.flag, stored.flag);
  // The client adds its own bookkeeping (MIN_OFFSET, MAX_OFFSET, CONSUME_START_TIME); every stored one is there.
  for (const [k, v] of Object.entries(stored.properties)) assert.equal(read.properties[k], v, `property ${k}`);
}
