/**
 * E2E of the push channel (docs/push-channel.md) on the local server, on both storage modes: a message sent
 * after idle is pulled because of a hint (the pull's cause is counted, never the time); a killed socket falls
 * back to polling and comes back; a hint for a queue the consumer no longer holds is ignored; a member
 * leaving makes the others rebalance through a `members` hint with the membership poll off; bad frames get
 * `{code, message}` and write nothing; `nimbus consume`'s loop (CliConsumer) reads after a hint, not a timer; a transaction check-back reaches its
 * producer through a `checks` hint.
 */
import assert from "node:assert/strict";
import { type AddressInfo, createServer, type Server, Socket } from "node:net";
import { afterEach, describe, it } from "node:test";
import WebSocket from "ws";
import { CONNECTIONS_TABLE } from "../../lib/broker/store/tables.js";
import { CliConsumer } from "../../lib/cli/cli-consumer.js";
import type { PushConsumerOptions } from "../../lib/client/consumer/consumer-options.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { Message } from "../../lib/client/message.js";
import { LocalTransactionState, TransactionProducer } from "../../lib/client/producer/transaction-producer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { CHANNEL_PATH } from "../../lib/protocol/index.js";
import { createTopic, fastTimings, Received, sendRoundRobin, waitUntil } from "../support/consumer-helpers.js";
import { MODE_LABEL, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/** Idle queues are read by the timer only after a minute, and never membership polls: what moves is the channel. */
const CHANNEL_ONLY: Partial<PushConsumerOptions> = {
  pullIdleBackoffMillis: 60_000,
  pullIdleBackoffMaxMillis: 60_000,
  channelPollInterval: 600_000,
  membershipPollInterval: 600_000,
  rebalanceInterval: 600_000,
};

/** A TCP gate in front of the server: `shut()` cuts every connection through it and refuses new ones. */
async function tcpGate(
  targetPort: number,
): Promise<{ port: number; shut(): void; open(): void; close(): Promise<void> }> {
  let shut = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (shut) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    upstream.connect(targetPort, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    shut() {
      shut = true;
      for (const s of sockets) s.destroy();
    },
    open() {
      shut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: push channel`, () => {
    const ctx = useTestServer(mode);
    const open: PushConsumer[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((c) => c.shutdown()));
    });
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

    function consumer(group: string, topic: string, received: Received, extra: Partial<PushConsumerOptions> = {}) {
      const c = new PushConsumer({
        consumerGroup: group,
        endpoints: ctx.server.url,
        timeoutMs: TEST_TIMEOUT_MS,
        ...fastTimings(),
        ...CHANNEL_ONLY,
        ...extra,
      });
      c.subscribe(topic, "*");
      c.registerMessageListener(received.listener(c.clientId));
      open.push(c);
      return c;
    }

    it("announces its URL, and a message sent after idle is pulled because of a hint, not the timer", async () => {
      assert.deepEqual(await api().channelInfo(), { url: ctx.server.server.channelUrl });
      const topic = uniqueName("PushIdle");
      const group = uniqueName("gPushIdle");
      const queues = await createTopic(api(), topic, 2);
      const received = new Received();
      const c = consumer(group, topic, received);
      await c.start();
      await waitUntil(() => c.assignedQueues().length === 4 && c.pushChannelStats.up, "4 queues and the channel up");
      // Every queue has read once after the registration and now waits a minute for its timer: no pull starts.
      let pulls = -1;
      await waitUntil(
        () => {
          const p = c.pushChannelStats.pulls;
          const now = p.afterFound + p.byHint + p.byTimer;
          const settled = now >= 4 && now === pulls;
          pulls = now;
          return settled;
        },
        "first reads done",
        TEST_TIMEOUT_MS,
        300,
      );
      const before = c.pushChannelStats;
      const sent = await sendRoundRobin(api(), queues, 4, "idle");
      await waitUntil(() => received.has(sent.map((s) => s.msgId)), "the 4 messages received");
      const after = c.pushChannelStats;
      assert.ok(after.hints > before.hints, "hints came");
      assert.ok(after.foundBy.byHint >= 1, `a hinted pull found them: ${JSON.stringify(after)}`);
      assert.equal(after.foundBy.byTimer, 0, "no timer pull found anything");
      assert.equal(after.pulls.byTimer, before.pulls.byTimer, "the idle timer did not fire");
      assert.equal(received.duplicates, 0);
      assert.ok(ctx.server.server.context.broker.channel.stats.posts >= 1, "the broker posted hints");
    });

    it("a killed socket falls back to polling, nothing lost or duplicated, and the channel comes back", async () => {
      const gate = await tcpGate(ctx.server.server.port);
      try {
        const topic = uniqueName("PushKill");
        const group = uniqueName("gPushKill");
        const queues = await createTopic(api(), topic, 1);
        const received = new Received();
        const c = consumer(group, topic, received, {
          pushChannel: `ws://127.0.0.1:${gate.port}${CHANNEL_PATH}`,
          // Polling as without the channel once it is down.
          pullIdleBackoffMillis: 20,
          pullIdleBackoffMaxMillis: 100,
          channelReconnectMillis: 50,
        });
        await c.start();
        await waitUntil(() => c.assignedQueues().length === 2 && c.pushChannelStats.up, "queues and channel up");
        const first = await sendRoundRobin(api(), queues, 6, "up");
        await waitUntil(() => received.has(first.map((s) => s.msgId)), "received over the channel");

        gate.shut();
        await waitUntil(() => !c.pushChannelStats.up, "the channel is down");
        const timerBefore = c.pushChannelStats.foundBy.byTimer;
        const down = await sendRoundRobin(api(), queues, 6, "down");
        await waitUntil(() => received.has(down.map((s) => s.msgId)), "received while the channel is down");
        assert.ok(c.pushChannelStats.foundBy.byTimer > timerBefore, "the poll timer found them");
        assert.equal(c.pushChannelStats.up, false, "still down: the gate is shut");

        gate.open();
        await waitUntil(() => c.pushChannelStats.up, "the channel is back");
        assert.ok(c.pushChannelStats.connects >= 2, "reconnected");
        const hintsBefore = c.pushChannelStats.hints;
        const back = await sendRoundRobin(api(), queues, 6, "back");
        await waitUntil(() => received.has(back.map((s) => s.msgId)), "received after the reconnect");
        await waitUntil(() => c.pushChannelStats.hints > hintsBefore, "hints again");
        assert.equal(received.duplicates, 0, "nothing delivered twice");
        assert.deepEqual(await api().consumerIds(group), [c.clientId], "still the group's member");
      } finally {
        await Promise.all(open.splice(0).map((c) => c.shutdown()));
        await gate.close();
      }
    });

    it("a member leaving makes the other rebalance through a members hint; hints for queues it gave up are ignored", async () => {
      const topic = uniqueName("PushLeave");
      const group = uniqueName("gPushLeave");
      const queues = await createTopic(api(), topic, 2);
      const received = new Received();
      const a = consumer(group, topic, received, { instanceName: "a" });
      await a.start();
      await waitUntil(() => a.assignedQueues().length === 4 && a.pushChannelStats.up, "a holds 4");
      const b = consumer(group, topic, received, { instanceName: "b" });
      await b.start();
      // b's registration tells a; a gives b half the queues (its membership poll is off).
      await waitUntil(() => a.assignedQueues().length === 2 && b.assignedQueues().length === 2, "2 and 2");
      assert.ok(a.pushChannelStats.roundsByChannel >= 1, "a rebalanced on a members hint");

      // A hint for a queue `a` gave up (b's now): `a` ignores it. Sent by the broker as an append would.
      const given = b.assignedQueues()[0];
      assert.ok(given);
      const ignoredBefore = a.pushChannelStats.ignoredHints;
      const gateway = ctx.server.server.context.broker.channel;
      // The broker's registrations are per connection: a still registered for the queue would be a bug.
      const aHolds = a.assignedQueues().map((q) => q.key());
      assert.ok(!aHolds.includes(given.key()));
      // Pretend a stale registration: a's channel hears of b's queue.
      const aConnection = await connectionOf(a.clientId);
      await ctx.server.server.storage
        .table(CONNECTIONS_TABLE)
        .put({ pk: `cq:${given.topic}:${given.brokerName}:${given.queueId}`, sk: aConnection, clientId: a.clientId });
      gateway.queueAppended({ topic: given.topic, brokerName: given.brokerName, queueId: given.queueId }, 1);
      await waitUntil(() => a.pushChannelStats.ignoredHints > ignoredBefore, "a ignored the hint");

      const roundsBefore = a.pushChannelStats.roundsByChannel;
      await b.shutdown();
      await waitUntil(() => a.assignedQueues().length === 4, "a takes the 4 back");
      assert.ok(a.pushChannelStats.roundsByChannel > roundsBefore, "through a members hint");
      const sent = await sendRoundRobin(api(), queues, 8, "after");
      // Nothing lost: hints or, failing one, the minute-long idle timer (the safety net) deliver it all.
      await waitUntil(() => received.has(sent.map((s) => s.msgId)), "everything received", 3 * TEST_TIMEOUT_MS);
    });

    it("refuses a bad frame with {code, message} and registers nothing", async () => {
      const ws = new WebSocket(ctx.server.server.channelUrl);
      await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
      const answers: unknown[] = [];
      ws.on("message", (d) => answers.push(JSON.parse(d.toString())));
      ws.send("not json");
      ws.send(JSON.stringify({ type: "register", heartbeat: { clientId: "x@y" }, queues: [{ topic: "" }] }));
      await waitUntil(() => answers.length === 2, "two answers");
      for (const a of answers) assert.equal((a as { code: string }).code, "PARAMETER_ILLEGAL");
      assert.deepEqual(await api().consumerIds("any-group"), []);
      ws.close();
    });

    async function connectionOf(clientId: string): Promise<string> {
      const table = ctx.server.server.storage.table(CONNECTIONS_TABLE);
      let found: string | undefined;
      await waitUntil(async () => {
        // The group's rows: `cg:<group>` / connection id, with the client id.
        const group = open.find((c) => c.clientId === clientId)?.consumerGroup ?? "";
        const page = await table.query(`cg:${group}`);
        found = page.items.find((i) => i.clientId === clientId)?.sk as string | undefined;
        return found !== undefined;
      }, "the connection of the client");
      return found as string;
    }
  });
}

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: nimbus consume on the push channel`, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

    it("wakes on hints: messages sent while it waits a minute are read at once", async () => {
      const topic = uniqueName("CliPush");
      const group = uniqueName("gCliPush");
      const queues = await createTopic(api(), topic, 1);
      const stop = new AbortController();
      const got: string[] = [];
      const consumer = new CliConsumer(api(), {
        group,
        topic,
        filter: { type: "TAG", expression: "*" },
        from: "last",
        idleFirstMs: 60_000,
        signal: stop.signal,
        onMessage: (m) => got.push(m.msgId),
        onError: () => {},
      });
      const running = consumer.run();
      try {
        await waitUntil(() => consumer.channel?.up === true, "the channel is up");
        await waitUntil(async () => (await api().queryOffsets(group, topic)).length === 2, "queues started");
        // The channel registers the held queues after the rebalance: a send before the broker holds them hears no hint.
        const connections = ctx.server.server.storage.table(CONNECTIONS_TABLE);
        await waitUntil(async () => {
          for (const q of queues) {
            const rows = await connections.query(`cq:${q.topic}:${q.brokerName}:${q.queueId}`);
            if (!rows.items.some((row) => row.clientId === consumer.clientId)) return false;
          }
          return true;
        }, "the channel registered both queues");
        const sent = await sendRoundRobin(api(), queues, 4, "cli");
        await waitUntil(() => sent.every((s) => got.includes(s.msgId)), "the CLI consumer printed them");
        const stats = consumer.channel?.stats;
        assert.ok(stats && stats.foundAfterHint >= 1, `found after a hint: ${JSON.stringify(stats)}`);
        assert.equal(stats?.foundAfterTimer, 0);
      } finally {
        stop.abort();
        await running;
      }
    });
  });
}

for (const mode of ["local", "aws"] as const) {
  describe(`${MODE_LABEL[mode]}: transaction check-backs on the push channel`, () => {
    // Check-backs 300 ms after the half message; the scheduled job runs only when the test says.
    const ctx = useTestServer(mode, { transactionTimeoutMs: 300, transactionCheckIntervalMs: 3_600_000 });

    it("a check-back left for a producer reaches it through a checks hint, not its next heartbeat", async () => {
      const group = uniqueName("pTxPush");
      const topic = uniqueName("TxPush");
      const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
      await api.updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
      const checked: string[] = [];
      const producer = new TransactionProducer({
        producerGroup: group,
        endpoints: ctx.server.url,
        sendMsgTimeout: TEST_TIMEOUT_MS,
        // The next heartbeat is an hour away: only the hint can bring the check.
        heartbeatBrokerInterval: 3_600_000,
      });
      producer.setTransactionListener({
        executeLocalTransaction: () => LocalTransactionState.UNKNOW,
        checkLocalTransaction: (msg) => {
          checked.push(msg.msgId);
          return LocalTransactionState.COMMIT_MESSAGE;
        },
      });
      await producer.start();
      try {
        await waitUntil(() => producer.channel?.up === true, "the producer's channel is up");
        const sent = await producer.sendMessageInTransaction(new Message(topic, "tx body"));
        const broker = ctx.server.server.context.broker;
        await waitUntil(async () => (await broker.checkTransactions()).sentToProducers > 0, "a check-back left");
        await waitUntil(() => checked.length > 0, "the producer answered the check");
        assert.equal(checked[0], sent.msgId);
        assert.ok((producer.channel?.stats.checksHints ?? 0) >= 1, "through a checks hint");
        await waitUntil(
          async () => (await api.transactionInfo(sent.transactionId ?? "", group)).state === "COMMITTED",
          "committed",
        );
      } finally {
        await producer.shutdown();
      }
    });
  });
}
