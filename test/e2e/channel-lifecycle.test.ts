/**
 * @module Issue 26, findings 11 and 12, on the embedded store and on the AWS adapters: a ping for a registration the
 * broker no longer holds is answered with `register-again` and the SDK registers again; a push-channel connection
 * that closes releases its client's queue locks at once (as RocketMQ's broker does when a channel closes), so
 * another consumer locks the queue without waiting out the 60 s lease.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { WebSocket } from "ws";
import { CONNECTIONS_TABLE } from "../../lib/broker/store/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { PushChannelClient } from "../../lib/client/transport/push-channel-client.js";
import type { RegisterFrame } from "../../lib/protocol/index.js";
import { ok } from "../support/http.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";

async function eventually(what: string, check: () => boolean | Promise<boolean>, tries = 1500): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await sleep(20);
  }
  assert.fail(`never: ${what}`);
}

/** A raw channel socket that keeps every frame it receives. */
async function openChannel(url: string): Promise<{ ws: WebSocket; frames: { type: string; connectionId?: string }[] }> {
  const ws = new WebSocket(url);
  const frames: { type: string; connectionId?: string }[] = [];
  ws.on("message", (data) => frames.push(JSON.parse(String(data)) as { type: string }));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { ws, frames };
}

for (const mode of ["local", "aws"] as const) {
  describe(`push channel lifecycle (${MODE_LABEL[mode]})`, () => {
    const ctx = useTestServer(mode);
    const topic = uniqueName("Ch");
    const group = uniqueName("CG");
    const queue = { brokerName: "broker-a", queueId: 0 };
    const registration = (clientId: string): RegisterFrame => ({
      type: "register",
      heartbeat: {
        clientId,
        consumerDataSet: [{ groupName: group, messageModel: "CLUSTERING", consumeType: "CONSUME_PASSIVELY" }],
      },
      queues: [{ topic, ...queue }],
    });
    const lock = (clientId: string) =>
      ctx.http.post<{ queues: { locked: boolean }[] }>(`/offsets/${group}/${topic}/lock`, {
        clientId,
        queues: [queue],
      });

    it("12: a closed connection's queue locks are released at once", async () => {
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1 }));
      const { ws, frames } = await openChannel(ctx.server.server.channelUrl);
      ws.send(JSON.stringify(registration("crashy@1")));
      await eventually("registered", () => frames.some((f) => f.type === "registered"));
      assert.equal(ok(await lock("crashy@1")).queues[0]?.locked, true);
      assert.equal(ok(await lock("other@2")).queues[0]?.locked, false, "held by crashy@1");
      ws.terminate();
      await eventually(
        "the lock is free for another consumer",
        async () => ok(await lock("other@2")).queues[0]?.locked === true,
      );
    });

    it("11: a ping for a removed registration gets register-again, and the SDK registers again", async () => {
      const { ws, frames } = await openChannel(ctx.server.server.channelUrl);
      ws.send(JSON.stringify(registration("raw@3")));
      await eventually("registered", () => frames.some((f) => f.type === "registered"));
      const connectionId = frames.find((f) => f.type === "registered")?.connectionId ?? "";
      const table = ctx.server.server.storage.table(CONNECTIONS_TABLE);
      await table.delete({ pk: `conn:${connectionId}`, sk: "registration" });
      ws.send(JSON.stringify({ type: "ping" }));
      await eventually("register-again", () => frames.some((f) => f.type === "register-again"));
      ws.terminate();

      const api = new NimbusApi({ endpoints: ctx.server.url });
      let ups = 0;
      const client = new PushChannelClient({
        api,
        registration: () => registration("sdk@4"),
        handlers: { queue: () => {}, members: () => {}, checks: () => {}, up: () => ups++, down: () => {} },
        pingIntervalMillis: 50,
        onError: () => {},
      });
      client.start();
      try {
        await eventually("the SDK is registered", () => ups === 1);
        const before = client.stats.registrations;
        // The broker loses the SDK connection's registration (as a TTL expiry would) while its socket stays open.
        await table.delete({ pk: `conn:${client.connectionId}`, sk: "registration" });
        await eventually(
          "the SDK registered again",
          () => client.stats.reregistrations >= 1 && client.stats.registrations > before,
        );
        await eventually("and is up again", () => ups >= 2 && client.up);
      } finally {
        await client.close();
        await api.close();
      }
    });
  });
}
