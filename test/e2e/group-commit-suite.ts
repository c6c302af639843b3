/**
 * @module E2E cases of group commit: many concurrent sends to one queue through the SDK (binary batches)
 * get distinct, consecutive offsets and every message reads back in order, on every storage mode; the
 * merged appends never cost more index writes than sends (no send of this process races another).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/api-client.js";
import { diffCounts } from "../../lib/storage/request-counter.js";
import { ok } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";

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
        const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 60_000 });
        const pad = "x".repeat(bodyBytes);
        await api.send({ topic, brokerName: "broker-a", queueId: 0, messages: [{ body: utf8(`warm ${pad}`) }] });
        const before = ctx.server.server.storage.counter.snapshot();
        const sends = Array.from({ length: 64 }, (_, i) =>
          api.send({
            topic,
            brokerName: "broker-a",
            queueId: 0,
            messages: Array.from({ length: 1 + (i % 3) }, (_, j) => ({ body: utf8(`s${i}m${j} ${pad}`) })),
          }),
        );
        const answers = await Promise.all(sends);
        const used = diffCounts(ctx.server.server.storage.counter.snapshot(), before);
        // Distinct, consecutive: sorted by offset, each send starts where the one before ended, from 1 on.
        const spans = answers
          .map((a, i) => ({ i, start: a.queueOffset, count: 1 + (i % 3) }))
          .sort((x, y) => x.start - y.start);
        let next = 1;
        for (const s of spans) {
          assert.equal(s.start, next, `send ${s.i} starts where the previous one ended`);
          next += s.count;
        }
        assert.ok(used.tableWrites <= 64, `at most one index write per send (${used.tableWrites})`);
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
