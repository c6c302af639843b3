/**
 * @module NotifyClientTermination after the client's Telemetry stream has already ended: a client that leaves
 * ends its stream and sends the termination together, and this server may read either first. The termination
 * still knows (from the Settings the stream carried) which producer groups to leave, so a check-back goes to a
 * producer that is still there.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { credentials, Metadata } from "@grpc/grpc-js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { messagingService } from "../../lib/grpc/messaging-service.js";
import { createTopic } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { rawClient, unaryCall } from "../support/grpc-raw.js";
import { uniqueName } from "../support/server-fixture.js";

describe("a producer that ends its Telemetry stream, then says it is terminating", () => {
  const ctx = useGrpcServer("local", {});

  it("is unregistered from its topics' producer groups", async () => {
    const topic = uniqueName("Leaving");
    await createTopic(new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 }), topic, 1);
    const clientId = `leaving@${process.pid}@1@test`;
    const md = new Metadata();
    md.set("x-mq-client-id", clientId);
    const client = rawClient(ctx.endpoint, credentials.createInsecure());
    const telemetry = messagingService().Telemetry;
    assert.ok(telemetry);
    try {
      const stream = client.makeBidiStreamRequest(
        telemetry.path,
        telemetry.requestSerialize,
        telemetry.responseDeserialize,
        md,
      );
      const answered = new Promise((resolve) => stream.once("data", resolve));
      const ended = new Promise((resolve) => stream.on("status", resolve));
      stream.write({
        settings: {
          clientType: "PRODUCER",
          publishing: { topics: [{ name: topic }] },
          userAgent: { language: "JAVA", version: "5.0.8" },
        },
      });
      await answered;
      const broker = ctx.server.context.broker;
      const producerIds = async () => (await broker.clients.producers(topic)).map((p) => p.clientId);
      assert.deepEqual(await producerIds(), [clientId]);
      // The stream ends first (the server has forgotten it), then the termination comes.
      stream.end();
      await ended;
      const answer = await unaryCall(client, "NotifyClientTermination", {}, md);
      assert.equal(answer.status?.code, "OK");
      assert.deepEqual(await producerIds(), []);
    } finally {
      client.close();
    }
  });
});
