/**
 * @module The gRPC door refuses a new call while the process's answers not taken are past their bound
 * (lib/core/untaken-answers.ts, shared with the remoting door), before any work: a SendMessage is ended
 * RESOURCE_EXHAUSTED and writes nothing; with the room back the same send is stored. The process's ledger is set past
 * its bound by a share of its own, as other connections' unread answers would hold it. Asserted on statuses and
 * counts, never on time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { credentials, status as grpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { PROCESS_UNTAKEN_ANSWERS, UNTAKEN_ANSWERS_FULL } from "../../lib/core/untaken-answers.js";
import { createTopic } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { rawClient, unaryCall } from "../support/grpc-raw.js";
import { uniqueName } from "../support/server-fixture.js";

describe("the gRPC door past the process's bound on untaken answers", () => {
  const ctx = useGrpcServer("local");

  it("ends a new call RESOURCE_EXHAUSTED before any work, and serves it once there is room", async () => {
    const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const topic = uniqueName("GrpcUntaken");
    await createTopic(api, topic, 1, ["broker-a"]);
    const client = rawClient(ctx.endpoint, credentials.createInsecure());
    const md = new Metadata();
    md.set("x-mq-client-id", `untaken@${process.pid}@1@test`);
    const send = () =>
      unaryCall(
        client,
        "SendMessage",
        {
          messages: [
            {
              topic: { name: topic },
              body: Buffer.from("m"),
              systemProperties: { messageId: "01ABCDEF0123456789ABCDEF0123456791", messageType: "NORMAL" },
            },
          ],
        },
        md,
      );
    const others = PROCESS_UNTAKEN_ANSWERS.share(); // other connections' unread answers
    try {
      others.set(PROCESS_UNTAKEN_ANSWERS.maxBytes + 1);
      const refused = await send().then(
        () => assert.fail("the send should be ended"),
        (err: ServiceError) => err,
      );
      assert.equal(refused.code, grpcStatus.RESOURCE_EXHAUSTED, refused.details);
      assert.equal(refused.details, UNTAKEN_ANSWERS_FULL);
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 0, "the refused send wrote nothing");
      others.release();
      assert.equal((await send()).status?.code, "OK");
      assert.equal((await api.topicStatus(topic))[0]?.maxOffset, 1);
    } finally {
      others.release();
      client.close();
    }
  });
});
