/**
 * @module Long-polled receives hold no work slot (lib/http/load-shedder.ts `parkWhile`): with 64 and with 1,000
 * receives of 20 s parked on an empty topic over HTTP (more than the shedder's 64 slots), a send, a pull and an ack
 * are served, on both storage modes. Asserted by the shedder's counts and the answers, never by elapsed time.
 * The parked receives are then woken by sends and all end by the hint (receivers of one group in one process
 * claim the queue one after another, so each woken one takes a message instead of losing a race).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { endpoints } from "../../lib/protocol/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";

/** Receives started a wave at a time, each wave parked before the next starts, as consumers arrive. */
const WAVE = 50;

for (const mode of ["local", "aws"] as const) {
  describe(`parked receives hold no work slot (${MODE_LABEL[mode]})`, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 60_000 });

    for (const count of [64, 1000]) {
      it(`with ${count} receives parked, a send, a pull and an ack are served`, async () => {
        const shedder = ctx.server.server.shedder;
        const topic = uniqueName("Parked");
        const other = uniqueName("ParkedOther");
        await createTopic(api(), topic, 1, ["broker-a"]);
        await createTopic(api(), other, 1, ["broker-a"]);
        // Plain fetch, one connection each (the SDK's transport bounds its own pool).
        const receive = (group: string, t: string) =>
          fetch(`${ctx.server.url}/receive`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              consumerGroup: group,
              topic: t,
              invisibleDurationMs: 60_000,
              awaitDurationMs: 20_000,
              maxMessages: 1,
            }),
          }).then((r) => r.text());
        const parkedGroup = uniqueName("gParked");
        const parked: Promise<unknown>[] = [];
        for (let started = 0; started < count; started += WAVE) {
          for (let i = started; i < Math.min(count, started + WAVE); i++) {
            parked.push(receive(parkedGroup, topic).catch((err: unknown) => err));
          }
          const want = parked.length;
          await waitUntil(() => shedder.parked >= want, `${want} receives parked`);
        }
        assert.equal(shedder.parked, count);
        assert.ok(count <= shedder.maxInFlight || shedder.running < shedder.maxInFlight, "slots are free");

        // Served while they wait: a send, a pull and a receive + ack on another topic.
        const sent = await api().send({ topic: other, messages: [{ body: new TextEncoder().encode("served") }] });
        assert.equal(sent.sendStatus, "SEND_OK");
        const pulled = await api().pull({
          consumerGroup: uniqueName("gPull"),
          topic: other,
          brokerName: "broker-a",
          queueId: 0,
          queueOffset: 0,
        });
        assert.equal(pulled.pullStatus, "FOUND");
        const group = uniqueName("gAck");
        await api().call(endpoints.startReceiving, { body: { consumerGroup: group, topic: other } });
        await api().send({ topic: other, messages: [{ body: new TextEncoder().encode("ack me") }] });
        const got = await api().call(endpoints.receive, {
          body: { consumerGroup: group, topic: other, invisibleDurationMs: 60_000, awaitDurationMs: 20_000 },
        });
        const acked = await api().call(endpoints.ack, {
          body: { consumerGroup: group, topic: other, receiptHandles: got.messages.map((m) => m.receiptHandle) },
        });
        assert.ok(got.messages.length > 0 && acked.entries.every((e) => e.code === "OK"), "received and acked");
        assert.equal(shedder.parked, count, "the receives still wait");

        // Sends wake them (each takes one message, or is SYSTEM_BUSY when the line it takes again is full); all end
        // by the hint, none by its timeout.
        const pop = ctx.server.server.context.broker.pop;
        const before = { ...pop.wakeCounts };
        const body = new TextEncoder().encode("wake");
        for (let i = 0; i < count; i += 100) {
          await api().send({ topic, messages: Array.from({ length: Math.min(100, count - i) }, () => ({ body })) });
        }
        await Promise.all(parked);
        assert.equal(shedder.parked, 0);
        assert.ok((pop.wakeCounts.hint ?? 0) - (before.hint ?? 0) >= count, "woken by the sends' hints");
        assert.equal(pop.wakeCounts.timeout ?? 0, before.timeout ?? 0, "none waited out its 20 s");
      });
    }
  });
}
