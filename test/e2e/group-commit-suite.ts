/**
 * @module E2E cases of group commit: many concurrent sends to one queue through the SDK (binary batches)
 * get distinct, consecutive offsets and every message reads back in order, on every storage mode; with
 * the queue's first index put held until the other 63 sends wait in line behind it, they are merged: a
 * handful of index items, not one per send.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { QUEUE_INDEX_TABLE, queuePk } from "../../lib/broker/queue-log/queue-index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { Table } from "../../lib/storage/table.js";
import { ok } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const utf8 = (s: string) => new TextEncoder().encode(s);

export function groupCommitCases(mode: ServerMode): void {
  describe("group commit: concurrent sends to one queue", () => {
    const ctx = useTestServer(mode);

    for (const [label, bodyBytes] of [
      ["inline batches", 16],
      ["object batches (over the inline threshold together)", 3000],
    ] as const) {
      it(`64 concurrent sends get distinct consecutive offsets and read back in order: ${label}`, async () => {
        const topic = uniqueName("Group");
        ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));
        // A connection per send: all 64 reach the broker at once (sends are never pipelined).
        const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 60_000, connections: { connections: 64 } });
        after(() => api.close());
        const pad = "x".repeat(bodyBytes);
        await api.send({ topic, brokerName: "broker-a", queueId: 0, messages: [{ body: utf8(`warm ${pad}`) }] });
        const queue = { topic, brokerName: "broker-a", queueId: 0 };
        const pk = queuePk(queue);
        // Hold the queue's next index put until the other 63 sends wait in line behind it (on the embedded store the
        // put goes with the reservation, in `addThenPut`).
        const index = ctx.server.server.storage.table(QUEUE_INDEX_TABLE) as Table & { put: Table["put"] };
        const put = index.put.bind(index);
        const addThenPut = index.addThenPut?.bind(index);
        let release: (() => void) | undefined;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        let holding = true;
        const holdOnce = async (itemPk: string) => {
          if (holding && itemPk === pk) {
            holding = false;
            await held;
          }
        };
        index.put = async (item, options) => {
          await holdOnce(item.pk);
          return put(item, options);
        };
        if (addThenPut !== undefined)
          index.addThenPut = async (write) => {
            await holdOnce(write.counter.pk.slice(0, pk.length));
            return addThenPut(write);
          };
        const sends = Array.from({ length: 64 }, (_, i) =>
          api.send({
            topic,
            brokerName: "broker-a",
            queueId: 0,
            messages: Array.from({ length: 1 + (i % 3) }, (_, j) => ({ body: utf8(`s${i}m${j} ${pad}`) })),
          }),
        );
        const queueLog = ctx.server.server.context.broker.queueLog;
        try {
          const giveUp = Date.now() + TEST_TIMEOUT_MS; // a failure bound only
          while (queueLog.waitingAppends(queue) < 63 && Date.now() < giveUp) {
            await new Promise((r) => setTimeout(r, 5));
          }
          assert.equal(queueLog.waitingAppends(queue), 63, "63 sends wait behind the held put");
        } finally {
          release?.();
          delete (index as { put?: unknown }).put; // the prototype's again (the held call kept its own)
          delete (index as { addThenPut?: unknown }).addThenPut;
        }
        const answers = await Promise.all(sends);
        // Distinct, consecutive: sorted by offset, each send starts where the one before ended, from 1 on.
        const spans = answers
          .map((a, i) => ({ i, start: a.queueOffset, count: 1 + (i % 3) }))
          .sort((x, y) => x.start - y.start);
        let next = 1;
        for (const s of spans) {
          assert.equal(s.start, next, `send ${s.i} starts where the previous one ended`);
          next += s.count;
        }
        // Merged: the warm-up's item, the held one, and the 63 waiting in at most a few (merge limit) items.
        const items = (await index.query(pk, { consistent: true })).items;
        assert.ok(items.length <= 5, `${items.length} index items for 65 sends`);
        // Every message reads back once, in offset order, where its send's answer put it.
        const bodies: string[] = [];
        for (let offset = 0; offset < next; ) {
          const res = await api.pull({
            consumerGroup: "CG",
            topic,
            brokerName: "broker-a",
            queueId: 0,
            queueOffset: offset,
            maxMsgNums: 256,
          });
          assert.equal(res.pullStatus, "FOUND");
          for (const m of res.messages) {
            assert.equal(m.queueOffset, offset);
            bodies.push(new TextDecoder().decode(m.body).split(" ")[0] ?? "");
            offset++;
          }
        }
        assert.equal(bodies.length, next);
        for (const s of spans) {
          for (let j = 0; j < s.count; j++) assert.equal(bodies[s.start + j], `s${s.i}m${j}`);
        }
      });
    }
  });
}
