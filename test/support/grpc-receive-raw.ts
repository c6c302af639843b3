/**
 * @module ReceiveMessage (server-streaming) of `apache.rocketmq.v2.MessagingService` from a raw gRPC client: the
 * messages as the wire carries them, every system property included (the official clients' MessageView has no
 * store time), for tests that compare a message field by field across doors.
 */
import { credentials, Metadata } from "@grpc/grpc-js";
import { messagingService } from "../../lib/grpc/messaging-service.js";
import { rawClient } from "./grpc-raw.js";

export interface WireMessage {
  topic: { name: string };
  userProperties: Record<string, string>;
  systemProperties: {
    tag?: string;
    keys: string[];
    messageId: string;
    bornTimestamp?: { seconds: number; nanos: number };
    storeTimestamp?: { seconds: number; nanos: number };
    queueId: number;
    queueOffset: number;
    deliveryAttempt: number;
  };
  body: Buffer;
}

/** A protobuf Timestamp in milliseconds. */
export const millisOf = (t: { seconds: number; nanos: number } | undefined): number | undefined =>
  t === undefined ? undefined : t.seconds * 1000 + Math.floor(t.nanos / 1_000_000);

/** One ReceiveMessage of `group` on `topic` (any broker, every tag): the messages it streamed. */
export function receiveRaw(endpoint: string, group: string, topic: string, batchSize = 32): Promise<WireMessage[]> {
  const client = rawClient(endpoint, credentials.createInsecure());
  const method = messagingService().ReceiveMessage;
  if (method === undefined) throw new Error("no ReceiveMessage");
  const request = {
    group: { name: group },
    messageQueue: { topic: { name: topic }, broker: null },
    filterExpression: { type: "TAG", expression: "*" },
    batchSize,
    invisibleDuration: { seconds: 30 },
    longPollingTimeout: { seconds: 1 },
  };
  return new Promise((resolve, reject) => {
    const out: WireMessage[] = [];
    const stream = client.makeServerStreamRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize as (b: Buffer) => { content?: string; message?: WireMessage },
      request,
      new Metadata(),
      { deadline: Date.now() + 20_000 },
    );
    stream.on("data", (answer: { content?: string; message?: WireMessage }) => {
      if (answer.content === "message" && answer.message !== undefined) out.push(answer.message);
    });
    stream.on("error", (err) => {
      client.close();
      reject(err);
    });
    stream.on("end", () => {
      client.close();
      resolve(out);
    });
  });
}
