/**
 * @module Which worker of `nimbus dev --workers N` serves a connection: a message id names the process that stored
 * the message (UNIQ_KEY: 4 bytes of IP, then 2 of pid), so a send over the connection, read back over HTTP (any
 * worker reads the same store), tells.
 */
import assert from "node:assert/strict";
import type { NimbusApi } from "../../lib/client/index.js";
import { RequestCode } from "../../lib/remoting/index.js";
import type { RawRemoting } from "./remoting-raw.js";

/** The process part of a message id, as hex. */
export const processOf = (msgId: string): string => msgId.slice(8, 12);

/** A SEND_BATCH_MESSAGE body of one message without properties (so the broker makes its id). */
function oneEntryBatch(): Buffer {
  const body = Buffer.from("probe");
  const out = Buffer.alloc(22 + body.byteLength);
  out.writeInt32BE(out.byteLength, 0);
  out.writeInt32BE(body.byteLength, 16);
  body.copy(out, 20);
  out.writeUInt16BE(0, 20 + body.byteLength);
  return out;
}

/**
 * The worker a raw remoting connection is served by: the pid in the UNIQ_KEY that worker gave a message sent over it
 * to queue 0 of `topic` on `brokerName` (the broker the connection's port serves), read back over HTTP.
 */
export async function workerOf(
  c: RawRemoting,
  api: NimbusApi,
  topic: string,
  brokerName = "broker-a",
): Promise<string> {
  const answer = await c.request({
    code: RequestCode.SEND_BATCH_MESSAGE,
    extFields: { producerGroup: "workers-probe", topic, queueId: "0", sysFlag: "0", flag: "0", bornTimestamp: "0" },
    body: oneEntryBatch(),
  });
  assert.equal(answer.code, 0, answer.remark);
  const queueOffset = Number(answer.extFields.queueOffset);
  const pulled = await api.pull({
    consumerGroup: "workers-probe-reader",
    topic,
    brokerName,
    queueId: 0,
    queueOffset,
    maxMsgNums: 1,
  });
  const stored = pulled.messages.find((m) => m.queueOffset === queueOffset);
  assert.ok(stored, `the probe at offset ${queueOffset} reads back from ${brokerName}`);
  return processOf(stored.msgId);
}
