/**
 * @module The process's budget for the bytes of requests being served holds for the gRPC door too, shared with the
 * HTTP door (a local server with a 64 KiB budget): a SendMessage larger than what an HTTP upload leaves is ended
 * RESOURCE_EXHAUSTED at once and writes nothing; once the upload is gone the same send is stored, and every byte is
 * given back once answered; a gzip-compressed send counts what it inflates to, so a few KiB that inflate past the
 * budget's room are ended RESOURCE_EXHAUSTED and write nothing; while requests still arriving hold their whole share of
 * the budget (half of it), a request that comes whole is served and one still arriving is ended RESOURCE_EXHAUSTED; a
 * request that stops half-way is ended DEADLINE_EXCEEDED once its time to arrive (the local server's body timeout) is
 * up, and its bytes are given back. Asserted on statuses and counts, never on time.
 */
import assert from "node:assert/strict";
import { type ClientHttp2Session, connect as connectHttp2 } from "node:http2";
import { describe, it } from "node:test";
import { type Client, credentials, status as grpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { messagingService } from "../../lib/grpc/messaging-service.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { rawClient, unaryCall } from "../support/grpc-raw.js";
import { halfUpload } from "../support/raw-http.js";
import { uniqueName } from "../support/server-fixture.js";

/** A SendMessage of one message with `body` to `topic`. */
const sendMessage = (client: Client, md: Metadata, topic: string, body: Buffer, messageId: string) =>
  unaryCall(
    client,
    "SendMessage",
    { messages: [{ topic: { name: topic }, body, systemProperties: { messageId, messageType: "NORMAL" } }] },
    md,
  );

describe("the gRPC door within the process's request-bytes budget", () => {
  const ctx = useGrpcServer("local", {}, { maxInFlightBytes: 64 * 1024 });

  it("ends a send past what an HTTP upload leaves, stores it once the upload is gone, gives every byte back", async () => {
    const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const topic = uniqueName("GrpcBudgeted");
    await createTopic(api, topic, 1, ["broker-a"]);
    const client = rawClient(ctx.endpoint, credentials.createInsecure());
    const md = new Metadata();
    md.set("x-mq-client-id", `budget@${process.pid}@1@test`);
    const send = (bytes: number) =>
      sendMessage(client, md, topic, Buffer.alloc(bytes, 1), "01ABCDEF0123456789ABCDEF0123456789");
    // Within the share of arriving bytes (32 KiB); with the 40 KiB send, past the budget.
    const held = 30 * 1024;
    const upload = halfUpload(ctx.server.port, topic, held);
    try {
      await waitUntil(() => ctx.server.inFlightBytes >= held, "the upload's bytes are held");
      const refused = await send(40 * 1024).then(
        () => assert.fail("the send should be ended"),
        (err: ServiceError) => err,
      );
      assert.equal(refused.code, grpcStatus.RESOURCE_EXHAUSTED, refused.details);
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 0, "the refused send wrote nothing");
      upload.destroy();
      await waitUntil(() => ctx.server.inFlightBytes === 0, "the upload's bytes are given back");
      // Within the share of arriving bytes however its frames come.
      assert.equal((await send(24 * 1024)).status?.code, "OK");
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 1);
      await waitUntil(() => ctx.server.inFlightBytes === 0, "the answered send's bytes are given back");
    } finally {
      upload.destroy();
      client.close();
    }
  });
});

describe("a gzip-compressed gRPC request within the budget", () => {
  const ctx = useGrpcServer("local", {}, { maxInFlightBytes: 64 * 1024 });

  it("counts what it inflates to: a few KiB of gzip that inflate past the budget are ended, writing nothing", async () => {
    const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const topic = uniqueName("GrpcGzipBudgeted");
    await createTopic(api, topic, 1, ["broker-a"]);
    // grpc-js compresses every request message with gzip (flag 1, grpc-encoding: gzip), as a client may.
    const client = rawClient(ctx.endpoint, credentials.createInsecure(), { "grpc.default_compression_algorithm": 2 });
    const md = new Metadata();
    md.set("x-mq-client-id", `gzip@${process.pid}@1@test`);
    const send = (bodyBytes: number) =>
      sendMessage(client, md, topic, Buffer.alloc(bodyBytes), "01ABCDEF0123456789ABCDEF0123456790");
    try {
      const refused = await send(256 * 1024).then(
        () => assert.fail("the send should be ended"),
        (err: ServiceError) => err,
      );
      assert.equal(refused.code, grpcStatus.RESOURCE_EXHAUSTED, refused.details);
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 0, "the refused send wrote nothing");
      await waitUntil(() => ctx.server.inFlightBytes === 0, "its bytes are given back");
      assert.equal((await send(16 * 1024)).status?.code, "OK", "a compressed send within the budget is served");
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 1);
      await waitUntil(() => ctx.server.inFlightBytes === 0, "the answered send's bytes are given back");
    } finally {
      client.close();
    }
  });
});

/** A SendMessage stream opened on `session` by hand (its bytes written as the test chooses) and its gRPC status. */
function handMadeSend(session: ClientHttp2Session, clientId: string) {
  const call = session.request({
    ":method": "POST",
    ":path": "/apache.rocketmq.v2.MessagingService/SendMessage",
    "content-type": "application/grpc",
    te: "trailers",
    "x-mq-client-id": clientId,
  });
  call.on("error", () => {});
  const status = new Promise<string | undefined>((resolve) => {
    call.on("trailers", (trailers) => resolve(String(trailers["grpc-status"])));
    call.on("response", (headers) => {
      if (headers["grpc-status"] !== undefined) resolve(String(headers["grpc-status"]));
    });
  });
  call.resume();
  return { call, status };
}

describe("a gRPC request while requests still arriving hold their share of the budget", () => {
  const ctx = useGrpcServer("local", {}, { maxInFlightBytes: 64 * 1024 });

  it("serves one that comes whole, and ends one still arriving RESOURCE_EXHAUSTED, writing nothing", async () => {
    const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const topic = uniqueName("GrpcArrivingShare");
    await createTopic(api, topic, 1, ["broker-a"]);
    const upload = halfUpload(ctx.server.port, topic, 32 * 1024);
    const session = connectHttp2(`http://${ctx.endpoint}`);
    session.on("error", () => {});
    try {
      await waitUntil(() => ctx.server.inFlightBytes === 32 * 1024, "the upload holds the arriving share");
      const request = messagingService().SendMessage?.requestSerialize({
        messages: [
          {
            topic: { name: topic },
            body: Buffer.alloc(1024, 1),
            systemProperties: { messageId: "01ABCDEF0123456789ABCDEF0123456791", messageType: "NORMAL" },
          },
        ],
      });
      assert.ok(request);
      const framed = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), request]);
      framed.writeUInt32BE(request.length, 1);
      // The message and the client's end in one DATA frame: whole in the read that brings it.
      const whole = handMadeSend(session, `whole@${process.pid}@1@test`);
      whole.call.end(framed);
      assert.equal(await whole.status, String(grpcStatus.OK));
      // Half of the same message, and no end: still arriving, past the share.
      const half = handMadeSend(session, `half@${process.pid}@1@test`);
      half.call.write(framed.subarray(0, 512));
      assert.equal(await half.status, String(grpcStatus.RESOURCE_EXHAUSTED));
      half.call.close();
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 1, "only the whole send was stored");
      upload.destroy();
      await waitUntil(() => ctx.server.inFlightBytes === 0, "every byte is given back");
      assert.equal(ctx.server.requestBytes.arriving, 0, "nothing counts as arriving");
    } finally {
      upload.destroy();
      session.close();
    }
  });
});

describe("a gRPC request that stops half-way", () => {
  const ctx = useGrpcServer("local", {}, { bodyTimeoutMs: 300 });

  it("is ended DEADLINE_EXCEEDED once its time to arrive is up, and gives its bytes back", async () => {
    const session = connectHttp2(`http://${ctx.endpoint}`);
    session.on("error", () => {});
    try {
      const { call, status } = handMadeSend(session, `halfway@${process.pid}@1@test`);
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(40_000, 1); // a message of 40,000 bytes announced, half of it sent, and no end
      call.write(Buffer.concat([prefix, Buffer.alloc(20_000, 1)]));
      await waitUntil(() => ctx.server.inFlightBytes >= 20_000, "the half-sent request's bytes are held");
      assert.equal(await status, String(grpcStatus.DEADLINE_EXCEEDED));
      await waitUntil(() => ctx.server.inFlightBytes === 0, "its bytes are given back");
      assert.equal(ctx.server.requestBytes.arriving, 0, "nothing counts as arriving");
      call.close();
    } finally {
      session.close();
    }
  });
});
