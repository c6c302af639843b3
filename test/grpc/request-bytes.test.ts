/**
 * @module The process's budget for the bytes of requests being served holds for the gRPC door too, shared with the
 * HTTP door (a local server with a 64 KiB budget): a SendMessage larger than what an HTTP upload leaves is ended
 * RESOURCE_EXHAUSTED at once and writes nothing; once the upload is gone the same send is stored, and every byte is
 * given back once answered. Asserted on statuses and counts, never on time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { credentials, status as grpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { rawClient, unaryCall } from "../support/grpc-raw.js";
import { halfUpload } from "../support/raw-http.js";
import { uniqueName } from "../support/server-fixture.js";

describe("the gRPC door within the process's request-bytes budget", () => {
  const ctx = useGrpcServer("local", {}, { maxInFlightBytes: 64 * 1024 });

  it("ends a send past what an HTTP upload leaves, stores it once the upload is gone, gives every byte back", async () => {
    const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const topic = uniqueName("GrpcBudgeted");
    await createTopic(api, topic, 1, ["broker-a"]);
    const client = rawClient(ctx.endpoint, credentials.createInsecure());
    const md = new Metadata();
    md.set("x-mq-client-id", `budget@${process.pid}@1@test`);
    const send = () =>
      unaryCall(
        client,
        "SendMessage",
        {
          messages: [
            {
              topic: { name: topic },
              body: Buffer.alloc(32 * 1024, 1),
              systemProperties: { messageId: "01ABCDEF0123456789ABCDEF0123456789", messageType: "NORMAL" },
            },
          ],
        },
        md,
      );
    const held = 40 * 1024;
    const upload = halfUpload(ctx.server.port, topic, held);
    try {
      await waitUntil(() => ctx.server.inFlightBytes >= held, "the upload's bytes are held");
      const refused = await send().then(
        () => assert.fail("the send should be ended"),
        (err: ServiceError) => err,
      );
      assert.equal(refused.code, grpcStatus.RESOURCE_EXHAUSTED, refused.details);
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 0, "the refused send wrote nothing");
      upload.destroy();
      await waitUntil(() => ctx.server.inFlightBytes === 0, "the upload's bytes are given back");
      assert.equal((await send()).status?.code, "OK");
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 1);
      await waitUntil(() => ctx.server.inFlightBytes === 0, "the answered send's bytes are given back");
    } finally {
      upload.destroy();
      client.close();
    }
  });
});
