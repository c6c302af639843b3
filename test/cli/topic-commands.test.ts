/**
 * @module The built `nimbus` command's cluster and topic commands against a local broker: tables, `--json`,
 * `-n` versus NIMBUS_URL, one-line errors with the API's code, and exit codes (0 ok, 1 failed, 2 usage).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ensureBuilt, nimbus, startTestBroker, type TestBroker, tableRows } from "../support/cli-runner.js";

const COMMANDS = [
  "dev",
  "clusterList",
  "updateTopic",
  "deleteTopic",
  "topicList",
  "topicRoute",
  "topicStatus",
  "consumerProgress",
  "consumerConnection",
  "queryMsgByOffset",
  "send",
  "consume",
];

describe("nimbus: help, cluster and topic commands (the built CLI)", () => {
  let broker: TestBroker;
  let url = "";
  const run = (...args: string[]) => nimbus(args, { url });

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
    url = broker.url;
  });
  after(() => broker.close());

  it("lists every command in --help, and every command has its own --help", async () => {
    const top = await nimbus(["--help"]);
    assert.equal(top.code, 0, top.stderr);
    for (const name of COMMANDS) assert.match(top.stdout, new RegExp(`^  ${name}[ |]`, "m"), name);
    const helps = await Promise.all(COMMANDS.map((name) => nimbus([name, "--help"])));
    helps.forEach((h, i) => {
      assert.equal(h.code, 0, `${COMMANDS[i]}: ${h.stderr}`);
      assert.match(h.stdout, new RegExp(`^Usage: nimbus ${COMMANDS[i]}[ |]`, "m"));
      if (COMMANDS[i] !== "dev") {
        const flat = h.stdout.replace(/\s+/g, " ");
        assert.match(flat, / -n, --namesrv <url> .*\(default: "http:\/\/127\.0\.0\.1:9876", env: NIMBUS_URL\)/);
        assert.match(h.stdout, /--json/);
      }
    });
    const version = await nimbus(["--version"]);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  it("clusterList shows both brokers of DefaultCluster; --json is the API's answer", async () => {
    const table = await run("clusterList");
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^#Cluster Name\s+#Broker Name\s+#BID\s+#Addr\n/);
    assert.deepEqual(tableRows(table.stdout), [
      ["DefaultCluster", "broker-a", "0", url],
      ["DefaultCluster", "broker-b", "0", url],
    ]);
    const json = await run("clusterList", "--json");
    assert.deepEqual(JSON.parse(json.stdout).clusterAddrTable, { DefaultCluster: ["broker-a", "broker-b"] });
  });

  it("-n takes the URL (or host:port, as mqadmin) instead of NIMBUS_URL", async () => {
    const hostPort = url.replace("http://", "");
    const viaFlag = await nimbus(["clusterList", "-n", hostPort], { url: "http://127.0.0.1:1" });
    assert.equal(viaFlag.code, 0, viaFlag.stderr);
    assert.equal(tableRows(viaFlag.stdout).length, 2);
  });

  it("updateTopic -b sets one broker's queues and leaves the other's; -c sets every broker of the cluster", async () => {
    const a = await run("updateTopic", "-t", "TopicTest", "-b", "broker-a", "-r", "2", "-w", "2");
    assert.equal(a.code, 0, a.stderr);
    assert.equal(
      a.stdout,
      "create topic to broker-a success.\nTopicConfig [topicName=TopicTest, readQueueNums=2, writeQueueNums=2, perm=RW-]\n",
    );
    const b = await run("updateTopic", "-t", "TopicTest", "-b", "broker-b", "-r", "3", "-w", "3", "--json");
    assert.equal(b.code, 0, b.stderr);
    assert.deepEqual(
      JSON.parse(b.stdout).queueDatas.map((q: { brokerName: string; readQueueNums: number }) => [
        q.brokerName,
        q.readQueueNums,
      ]),
      [
        ["broker-a", 2],
        ["broker-b", 3],
      ],
    );
    const route = await run("topicRoute", "-t", "TopicTest");
    assert.equal(route.code, 0, route.stderr);
    assert.deepEqual(tableRows(route.stdout), [
      ["broker-a", "DefaultCluster", "2", "2", "RW- (6)", url],
      ["broker-b", "DefaultCluster", "3", "3", "RW- (6)", url],
    ]);

    const c = await run("updateTopic", "-t", "ClusterTopic", "-c", "DefaultCluster", "-r", "1", "-w", "1", "-p", "4");
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^create topic to broker-a success\.\ncreate topic to broker-b success\.\n.*perm=R--\]\n$/);
    const routeJson = JSON.parse((await run("topicRoute", "-t", "ClusterTopic", "--json")).stdout);
    assert.deepEqual(
      routeJson.queueDatas.map((q: { brokerName: string; perm: number }) => [q.brokerName, q.perm]),
      [
        ["broker-a", 4],
        ["broker-b", 4],
      ],
    );
  });

  it("topicList and topicStatus show the topics and every queue's offsets", async () => {
    await run("updateTopic", "-t", "StatusTopic", "-b", "broker-a", "-r", "2", "-w", "2");
    await run("send", "-t", "StatusTopic", "-b", "broker-a", "-i", "1", "--body", "x");
    const list = await run("topicList");
    assert.equal(list.code, 0, list.stderr);
    assert.ok(list.stdout.split("\n").includes("StatusTopic"), list.stdout);
    assert.ok(JSON.parse((await run("topicList", "--json")).stdout).topics.includes("StatusTopic"));

    const status = await run("topicStatus", "-t", "StatusTopic");
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^#Broker Name\s+#QID\s+#Min Offset\s+#Max Offset\s+#Last Updated\n/);
    const rows = tableRows(status.stdout);
    assert.deepEqual(rows[0], ["broker-a", "0", "0", "0", "N/A"]);
    assert.deepEqual(rows[1]?.slice(0, 4), ["broker-a", "1", "0", "1"]);
    assert.match(rows[1]?.[4] ?? "", /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    const loaded = await run("topicStatus", "-t", "StatusTopic", "--load");
    assert.equal(loaded.code, 0, loaded.stderr);
    assert.match(loaded.stdout, /#Last Updated\s+#Appends\/s\s+#Keys\s+#Busiest Key\n/);
    assert.deepEqual(tableRows(loaded.stdout)[1]?.slice(-2), ["1", "0 %"], "one key, far from its ceiling");
    assert.doesNotMatch(loaded.stderr, /warning/);
    const json = JSON.parse((await run("topicStatus", "-t", "StatusTopic", "--json")).stdout);
    assert.deepEqual(
      json.queues.map((q: { queueId: number; maxOffset: number }) => [q.queueId, q.maxOffset]),
      [
        [0, 0],
        [1, 1],
      ],
    );
  });

  it("deleteTopic removes the route; the next topicRoute fails with TOPIC_NOT_EXIST", async () => {
    await run("updateTopic", "-t", "Doomed", "-b", "broker-a");
    const del = await run("deleteTopic", "-t", "Doomed");
    assert.equal(del.code, 0, del.stderr);
    assert.equal(del.stdout, "delete topic [Doomed] success.\n");
    const route = await run("topicRoute", "-t", "Doomed");
    assert.equal(route.code, 1);
    assert.equal(route.stdout, "");
    assert.match(route.stderr, /^nimbus: TOPIC_NOT_EXIST: .*Doomed\n$/);
  });

  it("API errors exit 1 with one line carrying the API's code", async () => {
    const cases: [string[], RegExp][] = [
      [["topicStatus", "-t", "NoSuchTopic"], /^nimbus: TOPIC_NOT_EXIST: /],
      [["updateTopic", "-t", "T1", "-b", "broker-z"], /^nimbus: PARAMETER_ILLEGAL: broker broker-z /],
      [["updateTopic", "-t", "TBW102", "-b", "broker-a"], /^nimbus: PARAMETER_ILLEGAL: /],
      [
        ["updateTopic", "-t", "T1", "-c", "NoCluster"],
        /^nimbus: PARAMETER_ILLEGAL: cluster NoCluster has no live broker/,
      ],
      [["deleteTopic", "-t", "bad topic"], /^nimbus: PARAMETER_ILLEGAL: /],
    ];
    for (const [args, pattern] of cases) {
      const r = await run(...args);
      assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.split("\n").length, 2, `one line: ${r.stderr}`);
    }
  });

  it("usage errors exit 2 with one line: missing, unknown or bad options, unknown commands", async () => {
    const cases: [string[], RegExp][] = [
      [["updateTopic", "-b", "broker-a"], /^nimbus: required option '-t, --topic <topic>' not specified\n$/],
      [["updateTopic", "-t", "T"], /^nimbus: updateTopic needs either -b <brokerName> or -c <clusterName>\n$/],
      [["updateTopic", "-t", "T", "-b", "broker-a", "-c", "DefaultCluster"], /needs either -b/],
      [["updateTopic", "-t", "T", "-b", "broker-a", "-r", "0"], /'-r, --readQueueNums <n>' argument '0' is invalid/],
      [["updateTopic", "-t", "T", "-b", "broker-a", "-p", "16"], /argument '16' is invalid/],
      [["topicList", "--bogus"], /^nimbus: unknown option '--bogus'\n$/],
      [["topicLst"], /^nimbus: unknown command 'topicLst' \(Did you mean topicList\?\)\n$/],
    ];
    for (const [args, pattern] of cases) {
      const r = await run(...args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
      assert.equal(r.stdout, "");
    }
  });

  it("an unreachable API exits 1 and says what to check", async () => {
    const closed = await startTestBroker();
    const deadUrl = closed.url;
    await closed.close();
    const r = await nimbus(["topicList"], { url: deadUrl });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^nimbus: cannot reach the Nimbus API \(.*ECONNREFUSED.*\); is the broker running/);
    assert.equal(r.stderr.split("\n").length, 2);
  });
});
