/**
 * @module RocketMQ's admin tool mqadmin (rocketmq-tools 4.9.8, unchanged; test/interop/mqadmin) pointed at the
 * remoting door with `-n 127.0.0.1:<port>`, one process per command, on both storage modes: clusterList names both
 * brokers at their door addresses; updateTopic creates a topic HTTP then routes; topicList, topicRoute and
 * topicStatus show it and its queues' offsets as HTTP reads them; queryMsgByKey, queryMsgById (by offset message
 * id) and queryMsgByUniqueKey find a message sent over HTTP; consumerProgress, consumerConnection and
 * consumerStatus (GET_CONSUMER_RUNNING_INFO relayed to the live 4.9.8 consumer over its connection) show a
 * consumer of test/interop/remoting-java; resetOffsetByTime moves that live consumer back
 * (RESET_CONSUMER_CLIENT_OFFSET: it receives every message again) and, with no consumer online, resets the
 * group's committed offsets in the broker (read over HTTP); deleteTopic removes the topic.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { hostAddress, offsetMsgId, physicalOffset } from "../../lib/remoting/wire-message.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { mqadmin, mqadminUnavailable } from "../support/mqadmin.js";
import { remotingClientUnavailable, startRemotingClient } from "../support/remoting-java.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const skip = mqadminUnavailable() ?? remotingClientUnavailable();

/** The whitespace-separated columns of each line. */
const rows = (lines: string[]): string[][] => lines.map((l) => l.trim().split(/\s+/));

for (const mode of ["local", "aws"] as const) {
  describe(`mqadmin 4.9.8 against the remoting door (${mode})`, { skip }, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const namesrv = () => `127.0.0.1:${ctx.server.server.port}`;
    const doorOf = (brokerName: string): string => {
      const port = ctx.server.server.remoting?.portOf(brokerName);
      assert.ok(port !== undefined, `the door serves ${brokerName}`);
      return `127.0.0.1:${port}`;
    };
    const admin = async (...args: string[]): Promise<string[]> => {
      const run = await mqadmin([args[0] ?? "", "-n", namesrv(), ...args.slice(1)]);
      return run.lines;
    };

    it("clusterList, updateTopic, topicList, topicRoute, topicStatus, deleteTopic", async () => {
      const cluster = rows(await admin("clusterList"));
      for (const broker of ["broker-a", "broker-b"])
        assert.ok(
          cluster.some((r) => r[0] === "DefaultCluster" && r[1] === broker && r[2] === "0" && r[3] === doorOf(broker)),
          `clusterList names ${broker} at ${doorOf(broker)}: ${JSON.stringify(cluster)}`,
        );

      const topic = uniqueName("Mqadmin");
      const created = await admin("updateTopic", "-c", "DefaultCluster", "-t", topic, "-r", "3", "-w", "3");
      for (const broker of ["broker-a", "broker-b"])
        assert.ok(created.includes(`create topic to ${doorOf(broker)} success.`), created.join("\n"));
      const route = await api().topicRoute(topic);
      assert.deepEqual(
        route.queueDatas.map((q) => [q.brokerName, q.readQueueNums, q.writeQueueNums]).sort(),
        [
          ["broker-a", 3, 3],
          ["broker-b", 3, 3],
        ],
        "HTTP reads the topic mqadmin created",
      );
      assert.ok((await admin("topicList")).includes(topic));
      assert.ok(
        rows(await admin("topicList", "-c")).some((r) => r[0] === "DefaultCluster" && r[1] === topic),
        "topicList -c names the topic's cluster",
      );

      const routeText = (await admin("topicRoute", "-t", topic)).join("");
      for (const broker of ["broker-a", "broker-b"]) {
        assert.ok(routeText.includes(`"brokerName":"${broker}"`), routeText);
        assert.ok(routeText.includes(`"${doorOf(broker)}"`), routeText);
      }
      assert.equal(routeText.match(/"readQueueNums":3/g)?.length, 2, routeText);

      const body = new TextEncoder().encode("status");
      for (let i = 0; i < 5; i++) await api().send({ topic, messages: [{ body }] });
      const status = rows(await admin("topicStatus", "-t", topic)).filter((r) => r[0]?.startsWith("broker-"));
      const viaHttp = await api().topicStatus(topic);
      assert.equal(status.length, 6, "three queues on each broker");
      for (const q of viaHttp) {
        const row = status.find((r) => r[0] === q.brokerName && r[1] === String(q.queueId));
        assert.ok(row, `topicStatus shows ${q.brokerName}/${q.queueId}`);
        assert.deepEqual(row.slice(2, 4), [String(q.minOffset), String(q.maxOffset)]);
      }
      assert.equal(
        status.reduce((n, r) => n + Number(r[3]), 0),
        5,
        "the five messages sent over HTTP",
      );

      const deleted = await admin("deleteTopic", "-c", "DefaultCluster", "-t", topic);
      assert.deepEqual(deleted, [
        `delete topic [${topic}] from cluster [DefaultCluster] success.`,
        `delete topic [${topic}] from NameServer success.`,
      ]);
      assert.ok(!(await api().listTopics()).includes(topic), "HTTP no longer lists the topic");
      assert.ok(!(await admin("topicList")).includes(topic));
    });

    it("queryMsgByKey, queryMsgById and queryMsgByUniqueKey find a message sent over HTTP", async () => {
      const topic = uniqueName("MqadminQuery");
      await createTopic(api(), topic, 2);
      const key = uniqueName("key");
      const sent = await api().send({
        topic,
        messages: [{ body: new TextEncoder().encode("find me"), tags: "TagQ", keys: [key] }],
      });
      const [msgId = ""] = sent.msgIds;
      const { brokerName, queueId } = sent.messageQueue;

      const byKey = rows(await admin("queryMsgByKey", "-t", topic, "-k", key));
      assert.deepEqual(
        byKey.filter((r) => r[0] !== "#Message"),
        [[msgId, String(queueId), String(sent.queueOffset)]],
      );

      // The offset message id: the door's address of the message's broker and its commit-log offset.
      const [host = "", port = ""] = doorOf(brokerName).split(":");
      const offsetId = offsetMsgId(
        hostAddress(host, Number(port)),
        physicalOffset(topic, brokerName, queueId, sent.queueOffset),
      );
      for (const lines of [
        await admin("queryMsgById", "-i", offsetId),
        await admin("queryMsgByUniqueKey", "-i", msgId, "-t", topic),
      ]) {
        const field = (name: string) =>
          lines
            .find((l) => l.startsWith(`${name}:`))
            ?.slice(name.length + 1)
            .trim();
        assert.equal(field("Topic"), topic, lines.join("\n"));
        assert.equal(field("Tags"), "[TagQ]");
        assert.equal(field("Keys"), `[${key}]`);
        assert.equal(field("Queue ID"), String(queueId));
        assert.equal(field("Queue Offset"), String(sent.queueOffset));
        assert.match(field("Properties") ?? "", new RegExp(`UNIQ_KEY=${msgId}`));
      }
    });

    it("a live 4.9.8 consumer: consumerProgress, consumerConnection, consumerStatus, resetOffsetByTime", async () => {
      const topic = uniqueName("MqadminGroup");
      await createTopic(api(), topic, 2);
      const before = Date.now() - 1000;
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await api().send({ topic, messages: [{ body: new TextEncoder().encode(`m ${i}`) }] });
        ids.push(...r.msgIds);
      }
      const group = uniqueName("MqadminG");
      // The client's guard outlasts every wait below (the redelivery alone may take 240 s under load): at 180 s it
      // killed the consumer mid-test when CI ran at load ~3.5 (the test takes ~52 s on a quiet machine).
      const live = startRemotingClient(["live", namesrv(), group, topic], 600_000);
      try {
        const deliveries = () => live.lines.filter((l) => l.startsWith("delivery ")).map((l) => l.split(" ")[1]);
        await waitUntil(() => new Set(deliveries()).size === 4, "the live consumer receives the four messages");
        const clientId = live.lines.find((l) => l.startsWith("client "))?.slice("client ".length) ?? "";
        assert.ok(clientId.includes("@"), `the consumer names its client id: ${live.lines.join("\n")}`);
        await waitUntil(async () => {
          const progress = await api().progress(group, topic);
          return progress.length === 4 && progress.every((r) => r.consumerOffset === r.brokerOffset);
        }, "its offsets are committed (every second)");

        const progress = rows(await admin("consumerProgress", "-g", group));
        for (const r of await api().progress(group, topic)) {
          const row = progress.find((p) => p[0] === topic && p[1] === r.brokerName && p[2] === String(r.queueId));
          assert.ok(row, `consumerProgress shows ${r.brokerName}/${r.queueId}: ${JSON.stringify(progress)}`);
          assert.deepEqual(row.slice(3, 6), [String(r.brokerOffset), String(r.consumerOffset), "0"]);
        }
        assert.ok(progress.some((p) => p.join(" ") === "Diff Total: 0"));
        const groups = rows(await admin("consumerProgress"));
        assert.ok(
          groups.some((g) => g[0] === group && g[1] === "1" && g[2] === "V4_9_8" && g[4] === "CLUSTERING"),
          JSON.stringify(groups),
        );

        const connection = rows(await admin("consumerConnection", "-g", group));
        assert.ok(
          connection.some((c) => c[0] === clientId && c[2] === "JAVA" && c[3] === "V4_9_8"),
          JSON.stringify(connection),
        );
        assert.ok(connection.some((c) => c[0] === topic && c[1] === "*"));

        // GET_CONSUMER_RUNNING_INFO: the door asks the consumer over its own connection and relays its answer.
        const status = await admin("consumerStatus", "-g", group);
        assert.ok(
          rows(status).some((s) => s[0] === "1" && s[1] === clientId),
          status.join("\n"),
        );
        assert.ok(status.includes("Rebalance OK"), status.join("\n"));
        const info = (await admin("consumerStatus", "-g", group, "-i", clientId)).join("\n");
        assert.match(info, new RegExp(`consumerGroup\\s+: ${group}`));
        assert.match(info, new RegExp(`Topic: ${topic}\\s+ClassFilter: false\\s+SubExpression: \\*`));
        for (const broker of ["broker-a", "broker-b"])
          for (const queueId of [0, 1])
            assert.match(
              info,
              new RegExp(`\\n${topic}\\s+${broker}\\s+${queueId}\\s+ProcessQueueInfo \\[commitOffset=1,`),
            );

        // resetOffsetByTime: each broker answers its queues, and sends the live consumer RESET_CONSUMER_CLIENT_OFFSET.
        const reset = rows(await admin("resetOffsetByTime", "-g", group, "-t", topic, "-s", String(before)));
        const table = reset.filter((r) => r[0]?.startsWith("broker-"));
        assert.deepEqual(
          table.map((r) => r.join(" ")).sort(),
          ["broker-a 0 0", "broker-a 1 0", "broker-b 0 0", "broker-b 1 0"],
          reset.join("\n"),
        );
        await waitUntil(
          () => ids.every((id) => deliveries().filter((d) => d === id).length === 2),
          "the consumer receives every message again (the client waits 10 s per broker's reset)",
          // A failure bound only: the client's two 10 s waits and its rebalance took over 90 s at load 15.
          240_000,
        ).catch((err: unknown) => {
          // What the consumer printed says which queue's messages did not come again.
          throw new Error(`${String(err)}; the consumer's last lines:\n${live.lines.slice(-40).join("\n")}`);
        });
      } finally {
        live.stop();
        await live.done;
      }

      // With no consumer online the reset is the broker's alone: the committed offsets move (read over HTTP).
      await waitUntil(async () => (await api().consumerIds(group)).length === 0, "the consumer has unregistered");
      const again = rows(await admin("resetOffsetByTime", "-g", group, "-t", topic, "-s", String(before)));
      assert.equal(again.filter((r) => r[0]?.startsWith("broker-")).length, 4, again.join("\n"));
      assert.deepEqual(
        (await api().queryOffsets(group, topic)).map((o) => o.offset),
        [0, 0, 0, 0],
        "every queue's committed offset is back at the first message",
      );
    });
  });
}
