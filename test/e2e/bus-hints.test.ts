/**
 * @module The append hints one worker of `nimbus dev --workers N` tells the others (lib/dev/process-bus.ts): one
 * message per queue per turn of the event loop, with the queue's newest end, however many appends that turn made;
 * appends heard from elsewhere are not sent back. Then a server on a recording bus end: its sends' hints reach the
 * bus with each queue's end. Nothing asserts on elapsed time.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { startLocalServer } from "../../lib/dev/local-server.js";
import { appendHints, type BusMessage, type ProcessBus } from "../../lib/dev/process-bus.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const recordingBus = (sent: BusMessage[]): ProcessBus => ({ send: (m) => sent.push(m), onMessage: () => undefined });

describe("process bus: append hints", () => {
  it("one hint per queue per turn, with the newest end; none for appends heard from elsewhere", async () => {
    const sent: BusMessage[] = [];
    const heard = appendHints(recordingBus(sent));
    const q0 = { topic: "T", brokerName: "broker-a", queueId: 0 };
    const q1 = { ...q0, queueId: 1 };
    heard(q0, 2, false);
    heard(q0, 5, false);
    heard(q1, 1, false);
    heard(q0, 4, false); // an append whose answer came late: the end stays the newest
    heard(q1, 9, true); // told by another process: not sent back
    assert.equal(sent.length, 0, "nothing before the turn ends");
    await nextTurn();
    assert.deepEqual(sent, [
      { t: "appended", ...q0, maxOffset: 5 },
      { t: "appended", ...q1, maxOffset: 1 },
    ]);
    heard(q0, 6, false);
    await nextTurn();
    assert.deepEqual(sent.at(-1), { t: "appended", ...q0, maxOffset: 6 }, "the next turn's appends: a hint again");
    assert.equal(sent.length, 3);
  });

  it("a server's sends reach its bus as hints with each queue's end", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-bus-hints-"));
    const sent: BusMessage[] = [];
    const server = await startLocalServer({
      port: 0,
      storage: { kind: "local", dataDir },
      bus: recordingBus(sent),
      background: false,
    });
    try {
      const body = new TextEncoder().encode("m");
      const send = (queueId: number) =>
        server.context.broker.sender.send({ topic: "Hints", brokerName: "broker-a", queueId, messages: [{ body }] });
      await Promise.all([send(0), send(0), send(0), send(1)]);
      await nextTurn();
      const ends = sent.flatMap((m) => (m.t === "appended" ? [`${m.queueId}:${m.maxOffset}`] : []));
      assert.ok(ends.length <= 4, `never more hints than appends: ${ends}`);
      assert.ok(ends.includes("0:3"), `queue 0's end after 3 sends: ${ends}`);
      assert.ok(ends.includes("1:1"), `queue 1's: ${ends}`);
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
