/**
 * @module The append notices the workers of `nimbus dev --workers N` tell each other (lib/dev/append-notices.ts),
 * two workers' ends joined by an in-memory bus: no notice while nobody waits elsewhere; a held topic's appends
 * noticed once per queue per turn with the queue's newest end; a hold heard after the append it waited for still
 * gets its notice (the append came after the hold's `since`), an older append does not; a topic let go is no
 * longer noticed; a starting worker learns the others' held topics. Then a server on a recording bus end. Nothing
 * asserts on elapsed time.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { AppendInterest } from "../../lib/broker/queue-log/index.js";
import { type AppendedNotice, AppendNotices, type InterestNotice } from "../../lib/dev/append-notices.js";
import { startLocalServer } from "../../lib/dev/local-server.js";
import type { BusMessage, ProcessBus } from "../../lib/dev/process-bus.js";
import { SubscriptionDefinitionSchema } from "../../lib/protocol/index.js";
import { waitUntil } from "../support/consumer-helpers.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const recordingBus = (sent: BusMessage[]): ProcessBus => ({ send: (m) => sent.push(m), onMessage: () => undefined });
type Notice = AppendedNotice | InterestNotice;

/** Two workers; what each sends is delivered to the other only when `deliver` runs (as the primary's relay). */
function twoWorkers(lingerMs = 60_000) {
  const inFlight: { to: "a" | "b"; m: Notice }[] = [];
  const noticed = { a: [] as AppendedNotice[], b: [] as AppendedNotice[] };
  const make = (name: "a" | "b", pid: number) => {
    const interest = new AppendInterest({ lingerMs });
    const other = name === "a" ? "b" : "a";
    const notices = new AppendNotices((m) => inFlight.push({ to: other, m }), interest, pid);
    return { interest, notices };
  };
  const workers = { a: make("a", 1), b: make("b", 2) };
  const deliver = () => {
    for (const { to, m } of inFlight.splice(0)) {
      if (m.t === "interest") workers[to].notices.heardInterest(m);
      else noticed[to].push(m);
    }
  };
  return { ...workers, deliver, noticed, inFlight };
}

const q0 = { topic: "T", brokerName: "broker-a", queueId: 0 };
const q1 = { ...q0, queueId: 1 };
const other = { ...q0, topic: "Other" };

describe("process bus: append notices", () => {
  it("no notice while nobody waits elsewhere; a held topic's appends once per queue per turn", async () => {
    const { a, b, deliver, noticed } = twoWorkers();
    a.notices.appended(q0, 1, false);
    await nextTurn();
    deliver();
    assert.deepEqual(noticed.b, [], "nobody waits: no notice");
    assert.equal(a.notices.counts.withheld, 1);
    const release = b.interest.hold("T", Date.now());
    await nextTurn();
    deliver(); // b's held topics reach a
    noticed.b.length = 0; // the catch-up of a's first append (after b's hold's `since` less the clock's second)
    a.notices.appended(q0, 2, false);
    a.notices.appended(q0, 5, false);
    a.notices.appended(q1, 1, false);
    a.notices.appended(q0, 4, false); // an append whose answer came late: the end stays the newest
    a.notices.appended(other, 1, false); // a topic nobody waits on
    a.notices.appended(q1, 9, true); // heard from elsewhere: never sent back
    await nextTurn();
    deliver();
    assert.deepEqual(noticed.b, [
      { t: "appended", ...q0, maxOffset: 5 },
      { t: "appended", ...q1, maxOffset: 1 },
    ]);
    release();
  });

  it("a hold heard after the append it waited for still gets its notice; an older append does not", async () => {
    const { a, b, deliver, noticed } = twoWorkers();
    a.notices.appended(q1, 3, false);
    const since = Date.now() + 5_000; // q1's append came more than the clock's second before this hold
    b.interest.hold("T", Date.now());
    // b's waiter read, then a appended before a heard of the hold: the race a notice must not lose.
    a.notices.appended(q0, 7, false);
    await nextTurn();
    deliver(); // b's hold reaches a
    await nextTurn();
    deliver(); // a's notices reach b
    assert.deepEqual(noticed.b, [
      { t: "appended", ...q1, maxOffset: 3 },
      { t: "appended", ...q0, maxOffset: 7 },
    ]);
    assert.equal(a.notices.counts.caughtUp, 2);
    // A hold whose `since` is after a's last appends (past the clock's second): nothing to catch up.
    const later = twoWorkers();
    later.a.notices.appended(q0, 1, false);
    later.b.interest.hold("T", since);
    await nextTurn();
    later.deliver();
    assert.deepEqual(later.noticed.b, []);
  });

  it("a topic let go is no longer noticed; a starting worker learns what the others hold", async () => {
    const { a, b, deliver, noticed, inFlight } = twoWorkers(0);
    const release = b.interest.hold("T", Date.now());
    await nextTurn();
    deliver();
    release();
    await new Promise((resolve) => setTimeout(resolve, 0)); // the linger (0 here) ends: the topic is dropped
    await nextTurn();
    deliver();
    a.notices.appended(q0, 1, false);
    await nextTurn();
    deliver();
    assert.deepEqual(noticed.b, [], "let go: no notice");
    b.interest.hold("T", Date.now());
    await nextTurn();
    deliver();
    await nextTurn();
    deliver();
    assert.deepEqual(noticed.b, [{ t: "appended", ...q0, maxOffset: 1 }], "held again: a tells of its recent append");
    // A third worker starts: it asks, and b answers with its held topic.
    const c = new AppendNotices((m) => inFlight.push({ to: "b", m }), new AppendInterest(), 3);
    c.start();
    const asked = inFlight.splice(0);
    assert.equal(asked[0]?.m.t, "interest");
    const answers: Notice[] = [];
    const bAnswering = new AppendNotices((m) => answers.push(m), b.interest, 2);
    bAnswering.heardInterest(asked[0]?.m as InterestNotice);
    assert.deepEqual(
      answers.map((m) => (m.t === "interest" ? m.topics : [])),
      [["T"]],
    );
    c.heardInterest(answers[0] as InterestNotice);
    c.appended(q0, 1, false);
    await nextTurn();
    assert.deepEqual(
      inFlight.map((f) => f.m),
      [{ t: "appended", ...q0, maxOffset: 1 }],
    );
  });

  it("a server's sends with nobody waiting elsewhere send no notice; a long-polled receive's topic is told", async () => {
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
      assert.deepEqual(
        sent.map((m) => m.t),
        ["interest"],
        "only the start's question to the other workers",
      );
      assert.equal(server.context.broker.queueLog.interest.notices.withheld, 4);
      // A long-polled receive holds its topic: the other workers are told, with a time before its first read.
      const broker = server.context.broker;
      const stop = new AbortController();
      const asked = { group: "HintsG", topic: "Hints", filter: { type: "TAG" as const, expression: "*" } };
      // What the group may take now is taken (and stays invisible): the long-polled receive then waits.
      await broker.pop.receive({ ...asked, maxMessages: 32, invisibleMs: 300_000, longPollMs: 0 });
      assert.equal(sent.filter((m) => m.t === "interest").length, 1, "a receive that never waits holds nothing");
      const before = Date.now();
      const receiving = broker.pop.receive(
        { ...asked, maxMessages: 32, invisibleMs: 300_000, longPollMs: 20_000 },
        stop.signal,
      );
      const told = () => sent.find((m) => m.t === "interest" && m.topics !== "all" && m.topics.includes("Hints"));
      await waitUntil(() => told() !== undefined, "the receive's topic told to the other workers");
      const held = told() as InterestNotice;
      assert.ok(held.since >= before && held.since <= Date.now(), "since: when the receive began");
      assert.ok(broker.queueLog.interest.has("Hints"));
      await waitUntil(() => broker.pop.waitingReceives === 1, "the receive waits");
      stop.abort();
      assert.deepEqual((await receiving).messages, [], "it waited, and its wait ended with the caller gone");
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("the worker that delivers subscriptions holds their topics: a save tells the other workers", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-bus-subs-"));
    const sent: BusMessage[] = [];
    const server = await startLocalServer({ port: 0, storage: { kind: "local", dataDir }, bus: recordingBus(sent) });
    try {
      const broker = server.context.broker;
      await broker.topics.upsert("Subscribed", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
      const functionArn = "arn:aws:lambda:us-east-1:000000000000:function:bus-hints";
      await broker.subscriptions.put(
        "BusSubs",
        SubscriptionDefinitionSchema.parse({ topic: "Subscribed", target: { type: "lambda", functionArn } }),
      );
      await waitUntil(
        () => sent.some((m) => m.t === "interest" && m.topics !== "all" && m.topics.includes("Subscribed")),
        "the subscribed topic told to the other workers",
      );
      assert.ok(broker.queueLog.interest.has("Subscribed"));
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
