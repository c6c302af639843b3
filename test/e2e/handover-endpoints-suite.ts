/**
 * @module E2E cases of the queue handover's endpoints: a commit that names its client records it as the
 * owner, a release marks the queues released with their offsets (one write each), the owners table shows
 * both; bad releases are 400 `{code, message}` and write nothing (offsets and owners unchanged).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { QueueOwner } from "../../lib/protocol/index.js";
import { expectError, ok, writesNothing } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";

export function handoverEndpointCases(mode: ServerMode): void {
  describe("queue handover: release and owners", () => {
    const ctx = useTestServer(mode);
    const topic = uniqueName("Release");
    const group = uniqueName("RG");
    const owners = async () =>
      ok(await ctx.http.get<{ queues: QueueOwner[] }>(`/offsets/${group}/${topic}/owners`)).queues.sort(
        (a, b) => a.queueId - b.queueId,
      );
    const strip = (rows: QueueOwner[]) => rows.map(({ updatedAt: _u, ...rest }) => rest);

    it("a named commit records its owner, a release marks the queue released, the owners table shows both", async () => {
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 3, writeQueueNums: 3, brokerNames: ["broker-a"] }));
      // Messages to commit over: an offset past a queue's end would be clamped to it (docs/api.md).
      const messages = Array.from({ length: 20 }, () => ({ body: Buffer.from("m").toString("base64") }));
      for (const queueId of [0, 1, 2])
        ok(await ctx.http.post("/send", { topic, brokerName: "broker-a", queueId, messages }));
      assert.deepEqual(await owners(), []);
      ok(
        await ctx.http.put(`/offsets/${group}/${topic}`, {
          clientId: "10.0.0.1@c1",
          offsetTable: [
            { brokerName: "broker-a", queueId: 0, offset: 5 },
            { brokerName: "broker-a", queueId: 1, offset: 7 },
          ],
        }),
      );
      ok(
        await ctx.http.put(`/offsets/${group}/${topic}`, {
          offsetTable: [{ brokerName: "broker-a", queueId: 2, offset: 1 }],
        }),
      );
      assert.deepEqual(
        ok(
          await ctx.http.post(`/offsets/${group}/${topic}/release`, {
            clientId: "10.0.0.1@c1",
            offsetTable: [{ brokerName: "broker-a", queueId: 1, offset: 9, successor: "10.0.0.2@c2" }],
          }),
        ),
        { code: "SUCCESS" },
      );
      const rows = await owners();
      assert.deepEqual(strip(rows), [
        { brokerName: "broker-a", queueId: 0, offset: 5, owner: "10.0.0.1@c1", released: false, successor: "" },
        {
          brokerName: "broker-a",
          queueId: 1,
          offset: 9,
          owner: "10.0.0.1@c1",
          released: true,
          successor: "10.0.0.2@c2",
        },
        { brokerName: "broker-a", queueId: 2, offset: 1, owner: "", released: false, successor: "" },
      ]);
      for (const r of rows) assert.ok(r.updatedAt > 0);
      // The release is a commit too: the offset table says 9.
      const table = ok(
        await ctx.http.get<{ offsetTable: { queueId: number; offset: number }[] }>(`/offsets/${group}/${topic}`),
      );
      assert.equal(table.offsetTable.find((e) => e.queueId === 1)?.offset, 9);
      // The next owner's commit takes the queue: no longer released.
      ok(
        await ctx.http.put(`/offsets/${group}/${topic}`, {
          clientId: "10.0.0.2@c2",
          offsetTable: [{ brokerName: "broker-a", queueId: 1, offset: 12 }],
        }),
      );
      assert.deepEqual(strip(await owners())[1], {
        brokerName: "broker-a",
        queueId: 1,
        offset: 12,
        owner: "10.0.0.2@c2",
        released: false,
        successor: "",
      });
    });

    it("a claim writes only a queue without a record: the first claim wins", async () => {
      const claim = (clientId: string, queueId: number, offset: number) =>
        ctx.http.put(`/offsets/${group}/${topic}`, {
          clientId,
          claim: true,
          offsetTable: [{ brokerName: "broker-a", queueId, offset }],
        });
      const claimTopic = `/offsets/${group}/${topic}`;
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 4, writeQueueNums: 4, brokerNames: ["broker-a"] }));
      ok(await claim("10.0.0.3@c3", 3, 0));
      ok(await claim("10.0.0.4@c4", 3, 7));
      // An existing queue is not claimed either.
      ok(await claim("10.0.0.4@c4", 0, 99));
      const rows = strip(await owners());
      assert.deepEqual(rows[3], {
        brokerName: "broker-a",
        queueId: 3,
        offset: 0,
        owner: "10.0.0.3@c3",
        released: false,
        successor: "",
      });
      assert.equal(rows[0]?.offset, 5);
      assert.ok(claimTopic.length > 0);
    });

    it("bad releases are 400 {code, message} and write nothing", async () => {
      const before = await owners();
      const release = (body: unknown) => () => ctx.http.post(`/offsets/${group}/${topic}/release`, body);
      const good = { brokerName: "broker-a", queueId: 0, offset: 3 };
      const cases: [string, unknown][] = [
        ["no client id", { offsetTable: [good] }],
        ["an empty table", { clientId: "c9", offsetTable: [] }],
        [
          "a queue the topic lacks (after a good one)",
          { clientId: "c9", offsetTable: [good, { ...good, queueId: 7 }] },
        ],
        ["a broker the topic lacks", { clientId: "c9", offsetTable: [{ ...good, brokerName: "broker-b" }] }],
        ["a queue twice", { clientId: "c9", offsetTable: [good, { ...good, offset: 4 }] }],
        ["a negative offset", { clientId: "c9", offsetTable: [{ ...good, offset: -1 }] }],
        ["an unknown field", { clientId: "c9", offsetTable: [good], force: true }],
        ["a successor that is no client id", { clientId: "c9", offsetTable: [{ ...good, successor: "" }] }],
      ];
      for (const [what, body] of cases) {
        const answer = await writesNothing(ctx.http, [topic], release(body), [group]);
        const err = expectError(answer, 400, "PARAMETER_ILLEGAL");
        assert.ok(err.message.length > 0, what);
      }
      expectError(
        await ctx.http.post(`/offsets/${group}/${uniqueName("NoSuchTopic")}/release`, {
          clientId: "c9",
          offsetTable: [good],
        }),
        404,
        "TOPIC_NOT_EXIST",
      );
      assert.deepEqual(await owners(), before, "owners unchanged by the refused releases");
    });
  });
}
