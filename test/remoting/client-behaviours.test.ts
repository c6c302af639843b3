/**
 * @module RocketMQ's classic remoting client (rocketmq-client 4.9.8, unchanged; the `Behaviours` scenarios of
 * test/interop/remoting-java) in the behaviours that span processes and time, on both storage modes: a
 * transaction whose producer is SIGKILLed while its half message is unknown, checked with another process of its
 * group and committed; orderly consumption with queue locks (LOCK_BATCH_MQ) by two processes; broadcasting to two
 * processes; DefaultLitePullConsumer.subscribe; delay levels. Nothing asserts on elapsed time: the waits are
 * failure bounds, the assertions are on what each process printed and what the store holds.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { storedMessages } from "../grpc/producer-suite.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import {
  type RemotingClientProcess,
  remotingClientUnavailable,
  runRemotingClient,
  startRemotingClient,
} from "../support/remoting-java.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const skip = remotingClientUnavailable();

const fieldsOf = (lines: readonly string[], prefix: string): string[][] =>
  lines.filter((l) => l.startsWith(`${prefix} `)).map((l) => l.split(" ").slice(1));

/** The queues an `orderly` process printed it holds locked, as of its last `locked` line. */
const lockedOf = (p: RemotingClientProcess): string[] => {
  const last = fieldsOf(p.lines, "locked").at(-1)?.[0];
  return last === undefined || last === "-" ? [] : last.split(",");
};

const GUARD_MS = 90_000;

for (const mode of ["local", "aws"] as const) {
  describe(`RocketMQ 4.9.8's remoting client across processes (${mode})`, { skip }, () => {
    // Check-backs 300 ms after a half message, then every 500 ms, many times (a JVM starts meanwhile); delay
    // level 1 is 5 s.
    const ctx = useTestServer(mode, {
      transactionTimeoutMs: 300,
      transactionCheckIntervalMs: 500,
      transactionCheckMax: 1000,
      messageDelayLevel: "5s 5s 5s",
    });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const namesrv = () => `127.0.0.1:${ctx.server.server.port}`;

    it("a transaction whose producer is SIGKILLed is checked with another producer of its group, and committed", async () => {
      const topic = uniqueName("RemotingTxKill");
      await createTopic(api(), topic, 1);
      const group = uniqueName("RemotingTxKillGroup");
      const a = startRemotingClient(["tx-unknown", namesrv(), group, topic], 180_000);
      let b: RemotingClientProcess | undefined;
      try {
        await waitUntil(() => fieldsOf(a.lines, "checked").length > 0, "A is checked and answers UNKNOW", GUARD_MS);
        const [[msgId = "", transactionId = ""] = []] = fieldsOf(a.lines, "sent");
        assert.ok(fieldsOf(a.lines, "checked").every(([, state, id]) => state === "UNKNOW" && id === msgId));
        assert.equal((await api().producerConnection(group)).length, 1, "A is the group's one producer");
        a.kill("SIGKILL");
        await a.done.catch(() => undefined);
        // The door saw A's connections close: A is no longer a producer of the group, so no check waits for it.
        // (The bound is under the 120 s after which A's heartbeats would have aged out on their own.)
        await waitUntil(
          async () => (await api().producerConnection(group)).length === 0,
          "A dropped from the group's producers once its connections closed",
          60_000,
        );
        assert.equal((await api().transactionInfo(transactionId, group)).state, "PENDING");
        b = startRemotingClient(["tx-checker", namesrv(), group], 180_000);
        const run = await b.done;
        // A check round may come again before B's commit (a oneway END_TRANSACTION) is recorded: each one is B's.
        const checked = fieldsOf(run.lines, "checked");
        assert.ok(checked.length > 0);
        for (const c of checked) assert.deepEqual(c, ["COMMIT_MESSAGE", msgId, topic]);
        await waitUntil(
          async () => (await storedMessages(api(), topic)).some((m) => m.msgId === msgId),
          "the message committed by B is delivered",
        );
        assert.equal((await api().transactionInfo(transactionId, group)).state, "COMMITTED");
      } finally {
        a.kill("SIGKILL");
        b?.kill("SIGKILL");
        await Promise.allSettled([a.done, b?.done]);
      }
    });

    it("orderly consumers: queues locked, each consumed by one process at a time, each key in order", async () => {
      const topic = uniqueName("RemotingOrderly");
      await createTopic(api(), topic, 2);
      const group = uniqueName("RemotingOrderlyGroup");
      const markers = mkdtempSync(path.join(os.tmpdir(), "nimbus-orderly-"));
      const keys = 8;
      const first = startRemotingClient(["orderly", namesrv(), group, topic, markers], 240_000);
      let second: RemotingClientProcess | undefined;
      const consumed = (p: RemotingClientProcess | undefined) => fieldsOf(p?.lines ?? [], "consumed");
      const distinct = () => new Set([...consumed(first), ...consumed(second)].map(([k, s]) => `${k} ${s}`));
      try {
        await waitUntil(() => lockedOf(first).length === 4, "the first consumer locks every queue", GUARD_MS);
        const sent = fieldsOf(
          (await runRemotingClient(["orderly-send", namesrv(), topic, `${keys}`, "0", "10"])).lines,
          "sent",
        );
        await waitUntil(() => distinct().size === keys * 10, "the first batch consumed", GUARD_MS);

        second = startRemotingClient(["orderly", namesrv(), group, topic, markers], 240_000);
        const late = second;
        await waitUntil(
          () => lockedOf(first).length === 2 && lockedOf(late).length === 2,
          "each consumer holds two queues locked",
          GUARD_MS,
        );
        const [mine, theirs] = [lockedOf(first), lockedOf(late)];
        assert.deepEqual([...mine, ...theirs].sort(), ["broker-a/0", "broker-a/1", "broker-b/0", "broker-b/1"]);
        const sentLater = (await runRemotingClient(["orderly-send", namesrv(), topic, `${keys}`, "10", "20"])).lines;
        sent.push(...fieldsOf(sentLater, "sent"));
        await waitUntil(() => distinct().size === keys * 20, "the second batch consumed", GUARD_MS);

        const queueOfKey = new Map(sent.map(([k = "", , q = ""]) => [k, q]));
        for (const p of [first, late]) {
          assert.deepEqual(fieldsOf(p.lines, "overlap"), [], "no queue consumed by both processes at once");
          const byKey = new Map<string, number[]>();
          for (const [k = "", s = "", q = ""] of consumed(p)) {
            assert.equal(q, queueOfKey.get(k), `${k} comes from the queue its selector chose`);
            byKey.set(k, [...(byKey.get(k) ?? []), Number(s)]);
          }
          for (const [k, seqs] of byKey)
            assert.deepEqual(
              seqs,
              [...seqs].sort((x, y) => x - y),
              `${k} in order`,
            );
        }
        // The second batch went to whichever process held each key's queue locked.
        const later = (p: RemotingClientProcess) =>
          new Set(
            consumed(p)
              .filter(([, s]) => Number(s) >= 10)
              .map(([, , q]) => q),
          );
        assert.deepEqual([...later(first)].sort(), [...mine].sort());
        assert.deepEqual([...later(late)].sort(), [...theirs].sort());
      } finally {
        first.stop();
        second?.stop();
        await Promise.allSettled([first.done, second?.done]);
        rmSync(markers, { recursive: true, force: true });
      }
    });

    it("BROADCASTING: two consumers of one group each get every message", async () => {
      const topic = uniqueName("RemotingBroadcast");
      await createTopic(api(), topic, 1);
      const group = uniqueName("RemotingBroadcastGroup");
      const sent = fieldsOf(
        (await runRemotingClient(["produce", namesrv(), topic, "sync", "6", "TagB"])).lines,
        "sent",
      ).map(([id = ""]) => id);
      const runs = await Promise.all(
        [0, 1].map(() => runRemotingClient(["broadcast", namesrv(), group, topic, "6"], GUARD_MS)),
      );
      for (const run of runs)
        assert.deepEqual(
          fieldsOf(run.lines, "got")
            .map(([id = ""]) => id)
            .sort(),
          [...sent].sort(),
        );
    });

    it("DefaultLitePullConsumer.subscribe: its own rebalance takes every queue, and its offsets are committed", async () => {
      const topic = uniqueName("RemotingLiteSub");
      await createTopic(api(), topic, 2);
      const group = uniqueName("RemotingLiteSubGroup");
      const sent = fieldsOf(
        (await runRemotingClient(["produce", namesrv(), topic, "sync", "8", "TagS"])).lines,
        "sent",
      ).map(([id = ""]) => id);
      const run = await runRemotingClient(["lite-subscribe", namesrv(), group, topic, "8"], GUARD_MS);
      const got = fieldsOf(run.lines, "got");
      assert.deepEqual(got.map(([id = ""]) => id).sort(), [...sent].sort());
      assert.equal(new Set(got.map(([, q]) => q)).size, 4, "read from all four queues");
      const offsets = await api().queryOffsets(group, topic);
      assert.equal(
        offsets.reduce((sum, o) => sum + o.offset, 0),
        8,
        `committed offsets: ${JSON.stringify(offsets)}`,
      );
    });

    it("delay levels: a level-1 message sent first is stored after an immediate one sent later, its DELAY kept", async () => {
      const topic = uniqueName("RemotingDelay");
      await createTopic(api(), topic, 1, ["broker-a"]);
      const sent = fieldsOf((await runRemotingClient(["delay", namesrv(), topic, "1"])).lines, "sent");
      assert.deepEqual(
        sent.map(([, key, status]) => [key, status]),
        [
          ["delayed", "SEND_OK"],
          ["immediate", "SEND_OK"],
        ],
      );
      const [[delayedId = ""] = [], [immediateId = ""] = []] = sent;
      let stored = await storedMessages(api(), topic);
      await waitUntil(async () => {
        stored = await storedMessages(api(), topic);
        return stored.length === 2;
      }, "the delayed message reaches its queue");
      // One queue: the immediate message took offset 0; the delayed one came after its delay.
      assert.deepEqual(
        stored.map((m) => [m.msgId, m.queueOffset]),
        [
          [immediateId, 0],
          [delayedId, 1],
        ],
      );
      assert.equal(stored[1]?.properties.DELAY, "1");
      assert.equal(stored[0]?.properties.DELAY, undefined);
      const pushed = await runRemotingClient(["push", namesrv(), uniqueName("RemotingDelayGroup"), topic, "2"]);
      const read = pushed.lines
        .filter((l) => l.startsWith("msg "))
        .map((l) => JSON.parse(l.slice(4)) as { msgId: string; properties: Record<string, string> });
      assert.equal(read.find((m) => m.msgId === delayedId)?.properties.DELAY, "1", "the 4.x client reads DELAY too");
    });
  });
}
