/**
 * @module mqadmin's command lines as a RocketMQ user types them, run through the built `nimbus` against a local
 * broker: each is accepted (and its effect checked by state), or refused with a hint to the Nimbus way (exit 2),
 * never commander's bare `unknown option` / `unknown command`; a refused connection is not SYSTEM_BUSY.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ensureBuilt, nimbus, startTestBroker, type TestBroker, tableRows } from "../support/cli-runner.js";

/** Refused lines: mqadmin's options and commands Nimbus has no use for, with what the hint must name. */
const REFUSED: readonly (readonly [string, RegExp])[] = [
  ["clusterList -m", /-m \(mqadmin's moreStats\) is not used by Nimbus: .*topicStatus/],
  ["clusterList -i 5", /watch -n/],
  ["updateTopic -t TopicTest -c DefaultCluster -o true", /queue selector/],
  ["updateTopic -t TopicTest -c DefaultCluster -a +message.type=NORMAL", /one attribute, \+key\.index/],
  ["createUser -b 127.0.0.1:10911 -u alice -p secret-pass-1", /-b \(mqadmin's brokerAddr\).*stage-wide/],
  ["createAcl -s User:alice -r Topic:TopicTest -a Pub -i 10.0.0.1", /source-IP/],
  ["consumerConnection -g G -b 127.0.0.1:10911", /stage-wide/],
  ["consumerStatus -g G -s", /not JVMs/],
  ["resetOffsetByTime -g G -t TopicTest -s now -q 0", /every queue of the topic/],
  ["sendMessage -t TopicTest -p hello -m true", /enableMsgTrace/],
  ["queryMsgByOffset -t TopicTest -b broker-a -i 0 -o 0 -f UTF-8", /base64/],
  [
    "updateBrokerConfig -b 127.0.0.1:10911 -k flushDiskType -v SYNC_FLUSH",
    /updateBrokerConfig is mqadmin's; .*per stage/,
  ],
  ["queryMsgByKey -t TopicTest -k k1 -c 65", /an integer from 1 to 64/],
  ["queryMsgById -i 0A0000071092 -t TopicTest -g G", /Nimbus does not push a message to one consumer/],
  ["haStatus -c DefaultCluster", /no controller/],
  ["updateAclConfig -a RocketMQ -s 12345678 -c DefaultCluster", /ACL 2\.0 .*createUser -u U -p P, then createAcl/],
  ["deleteAclConfig -a RocketMQ -c DefaultCluster", /ACL 2\.0/],
  ["clusterAclConfigVersion -c DefaultCluster", /ACL 2\.0/],
  ["updateGlobalWhiteAddr -g 10.10.103.* -c DefaultCluster", /does not admit by source address/],
];

describe("nimbus speaks mqadmin's command lines (the built CLI)", () => {
  let broker: TestBroker;
  let url = "";
  const run = (line: string) => nimbus(line.split(" "), { url });

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
    url = broker.url;
  });
  after(() => broker.close());

  it("takes mqadmin's options where they mean something in Nimbus, with the effect they have there", async () => {
    const created = await run("updateTopic -t TopicTest -c DefaultCluster");
    assert.equal(created.code, 0, created.stderr);
    const sent = await run("sendMessage -t TopicTest -p hello -c TagA -k k1");
    assert.equal(sent.code, 0, sent.stderr);
    const [row] = tableRows(sent.stdout);
    assert.equal(row?.[3], "SEND_OK");
    const [brokerName, queueId] = [row?.[0] ?? "", row?.[1] ?? ""];
    const stored = await run(`queryMsgByOffset -t TopicTest -b ${brokerName} -i ${queueId} -o 0 --json`);
    const message = JSON.parse(stored.stdout) as { tags: string; keys: string[]; bodyText: string };
    assert.deepEqual([message.tags, message.keys, message.bodyText], ["TagA", ["k1"], "hello"]);

    const listed = await run("topicList -c");
    assert.deepEqual(tableRows(listed.stdout), [["DefaultCluster", "TopicTest"]]);
    assert.deepEqual((await run("topicClusterList -t TopicTest")).stdout, "DefaultCluster\n");
    assert.equal((await run("clusterList -c DefaultCluster")).code, 0);
    assert.equal((await run("producerConnection -g G -t TopicTest")).code, 0);
    assert.equal((await run("topicRoute -t TopicTest -l")).code, 0);
    const status = await run("topicStatus -t TopicTest -c DefaultCluster");
    assert.equal(tableRows(status.stdout).length, 16, status.stdout);

    // An address for -b: every broker served there (nimbus dev serves both at one URL).
    const byAddress = await run(`updateTopic -t T2 -b ${url.replace("http://", "")} -r 2 -w 2`);
    assert.equal(byAddress.code, 0, byAddress.stderr);
    assert.match(byAddress.stdout, /create topic to broker-a success\.\ncreate topic to broker-b success\./);
    const gone = await run("deleteTopic -t T2 -c DefaultCluster");
    assert.equal(gone.code, 0, gone.stderr);
    assert.doesNotMatch((await run("topicList")).stdout, /T2/);

    const unknown = await run("deleteTopic -t TopicTest -c NoSuchCluster");
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^nimbus: PARAMETER_ILLEGAL: cluster NoSuchCluster has no live broker \(live clusters: DefaultCluster\)\n$/,
    );
    assert.match((await run("topicList")).stdout, /TopicTest/, "a refused -c deletes nothing");

    const skipped = await run("skipAccumulatedMessage -g G -t TopicTest");
    assert.equal(skipped.code, 0, skipped.stderr);
    const progress = await run("consumerProgress -g G -s -c DefaultCluster");
    assert.equal(progress.code, 0, progress.stderr);
    assert.match(progress.stdout, /#Client IP/);
    assert.match(progress.stdout, /\nDiff Total: 0\n$/, "skipped to the end: no lag");
  });

  it("refuses the others with the Nimbus way, exit 2, writing nothing", async () => {
    const results = await Promise.all(REFUSED.map(([line]) => run(line)));
    results.forEach((r, i) => {
      const [line, hint] = REFUSED[i] ?? ["", /$/];
      assert.equal(r.code, 2, `${line}: ${r.stderr}`);
      assert.match(r.stderr, /^nimbus: /, line);
      assert.match(r.stderr, hint, line);
      assert.doesNotMatch(r.stderr, /unknown (option|command)/, line);
      assert.equal(r.stdout, "", line);
    });
    assert.equal(tableRows((await run("topicStatus -t TopicTest")).stdout).length, 16);
  });

  it("a refused connection says it cannot reach the API, not SYSTEM_BUSY", async () => {
    const closed = await startTestBroker();
    const deadUrl = closed.url;
    await closed.close();
    const r = await nimbus(["clusterList"], { url: deadUrl });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^nimbus: cannot reach the Nimbus API \(.*ECONNREFUSED.*\)/);
    assert.doesNotMatch(r.stderr, /SYSTEM_BUSY/);
  });
});
