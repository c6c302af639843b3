/**
 * @module NotifyClientTermination after the client's Telemetry stream has already ended: a client that leaves
 * ends its stream and sends the termination together, and this server may read either first. The termination
 * still knows (from the Settings the stream carried) which producer groups to leave, so a check-back goes to a
 * producer that is still there. Telemetry streams opened under one client id stay counted against the endpoint's
 * bound until they end (the newest holds the client), so reusing an id cannot pass `maxStreams`; a burst of
 * Heartbeat calls queues one delivery of check-backs behind the one running.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { credentials, Metadata } from "@grpc/grpc-js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { messagingService } from "../../lib/grpc/messaging-service.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { rawClient, unaryCall } from "../support/grpc-raw.js";
import { uniqueName } from "../support/server-fixture.js";

describe("a producer's Telemetry streams", () => {
  // No periodic refresh: a delivery of check-backs comes only from what a test does.
  const ctx = useGrpcServer("local", {}, { grpcTelemetry: { refreshMs: 3_600_000 } });

  /** A topic, a raw client with `name`'s client id, and a Telemetry stream opener that sends producer Settings. */
  async function producerOf(name: string) {
    const topic = uniqueName(name);
    await createTopic(new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 }), topic, 1);
    const clientId = `${name.toLowerCase()}@${process.pid}@1@test`;
    const md = new Metadata();
    md.set("x-mq-client-id", clientId);
    const client = rawClient(ctx.endpoint, credentials.createInsecure());
    const telemetry = messagingService().Telemetry;
    assert.ok(telemetry);
    /** A stream whose Settings were answered. */
    const open = async () => {
      const stream = client.makeBidiStreamRequest(
        telemetry.path,
        telemetry.requestSerialize,
        telemetry.responseDeserialize,
        md,
      );
      stream.on("error", () => {});
      const answered = new Promise((resolve) => stream.once("data", resolve));
      stream.write({
        settings: {
          clientType: "PRODUCER",
          publishing: { topics: [{ name: topic }] },
          userAgent: { language: "JAVA", version: "5.0.8" },
        },
      });
      await answered;
      return stream;
    };
    return { topic, clientId, md, client, open };
  }

  it("ended, then a termination: the producer is unregistered from its topics' groups", async () => {
    const { topic, clientId, md, client, open } = await producerOf("Leaving");
    try {
      const stream = await open();
      const ended = new Promise((resolve) => stream.on("status", resolve));
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

  it("opened under one client id, each is counted against the bound until it ends, whichever holds the client", async () => {
    const { clientId, client, open } = await producerOf("Reused");
    const sessions = ctx.server.grpc?.sessions;
    assert.ok(sessions);
    const before = sessions.size;
    try {
      const streams = [await open(), await open(), await open()];
      assert.equal(sessions.size, before + 3, "the streams taken over from are still counted");
      assert.ok(sessions.settingsOf(clientId) !== undefined, "the newest stream holds the client");
      for (const stream of streams) stream.end();
      await waitUntil(() => sessions.size === before, "every ended stream leaves the count");
    } finally {
      client.close();
    }
  });

  it("asked for check-backs by a burst of Heartbeat calls, queues one delivery behind the one running", async () => {
    const { client, md, open } = await producerOf("Bursting");
    const clients = ctx.server.context.broker.clients;
    const registered = clients.heartbeat.bind(clients);
    let deliveries = 0;
    let gate: Promise<void> | undefined;
    let release = () => {};
    const heartbeat = () => unaryCall(client, "Heartbeat", {}, md);
    try {
      await open();
      // From here every registration a delivery of check-backs makes is counted; while `gate` is set it waits.
      clients.heartbeat = async (...args) => {
        deliveries++;
        if (gate !== undefined) await gate;
        return registered(...args);
      };
      await heartbeat();
      await waitUntil(() => deliveries === 1, "a call's delivery");
      await heartbeat();
      await waitUntil(() => deliveries === 2, "the next call's delivery: one done leaves room for the next");
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      await heartbeat();
      await waitUntil(() => deliveries === 3, "a delivery running, held");
      const answers = await Promise.all(Array.from({ length: 20 }, heartbeat));
      assert.ok(answers.every((a) => a.status?.code === "OK"));
      release();
      await waitUntil(() => deliveries >= 4, "the burst's delivery");
      // A later call's delivery is queued behind whatever the burst left: it is the fifth only if the burst left one.
      await heartbeat();
      await waitUntil(() => deliveries >= 5, "a later call's delivery");
      assert.equal(deliveries, 5, "the burst of 20 calls queued one delivery behind the one running");
    } finally {
      clients.heartbeat = registered;
      release();
      client.close();
    }
  });
});
