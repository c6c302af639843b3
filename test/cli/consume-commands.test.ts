/**
 * @module The built `nimbus consume`, `consumerProgress` and `consumerConnection` against a local broker:
 * where a new group starts (`--from`), tag filters, `--count` committing exactly what was printed, `--json`
 * lines, progress mode, Ctrl-C committing and leaving the group, and the errors.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  ensureBuilt,
  nimbus,
  spawnNimbus,
  startTestBroker,
  type TestBroker,
  tableRows,
} from "../support/cli-runner.js";

const TOPIC = "ConsumeTopic";
const LINE = /^broker-[ab]\/\d offset=\d+ (tags=Tag[AB] )?msgId=[0-9A-F]{32} body=.*$/;

describe("nimbus consume, consumerProgress and consumerConnection (the built CLI)", () => {
  let broker: TestBroker;
  let url = "";
  const run = (...args: string[]) => nimbus(args, { url });
  const lines = (stdout: string) => stdout.split("\n").filter((l) => l.length > 0);
  const progress = async (group: string) => {
    const r = await run("consumerProgress", "-g", group, "-t", TOPIC, "--json");
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).rows as { brokerOffset: number; consumerOffset: number; diff: number }[];
  };
  const consumed = async (group: string) => (await progress(group)).reduce((sum, r) => sum + r.consumerOffset, 0);

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
    url = broker.url;
    // The README's topic: 2 queues on broker-a, 3 on broker-b; 6 TagA and 4 TagB messages.
    for (const [b, n] of [
      ["broker-a", "2"],
      ["broker-b", "3"],
    ] as const) {
      assert.equal((await run("updateTopic", "-t", TOPIC, "-b", b, "-r", n, "-w", n)).code, 0);
    }
    assert.equal(
      (await run("send", "-t", TOPIC, "--tags", "TagA", "--body", "a", "--count", "6", "--batch", "1")).code,
      0,
    );
    assert.equal(
      (await run("send", "-t", TOPIC, "--tags", "TagB", "--body", "b", "--count", "4", "--batch", "1")).code,
      0,
    );
  });
  after(() => broker.close());

  it("a new group with --from first reads every message once, prints a line each, and commits", async () => {
    const r = await run("consume", "-g", "g1", "-t", TOPIC, "--from", "first", "--count", "10");
    assert.equal(r.code, 0, r.stderr);
    const out = lines(r.stdout);
    assert.equal(out.length, 10, r.stdout);
    for (const l of out) assert.match(l, LINE);
    assert.equal(new Set(out.map((l) => /msgId=(\w+)/.exec(l)?.[1])).size, 10);
    assert.match(
      r.stderr,
      /^consumed 10 messages of ConsumeTopic as group g1 from 5 queues in .*; offsets committed\n$/,
    );

    const table = await run("consumerProgress", "-g", "g1");
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      /^#Topic\s+#Group\s+#Broker Name\s+#QID\s+#Broker Offset\s+#Consumer Offset\s+#Diff\s+#LastTime\n/,
    );
    const rows = tableRows(table.stdout);
    assert.deepEqual(
      rows.map((row) => row.slice(0, 4)),
      [0, 1, 0, 1, 2].map((q, i) => [TOPIC, "g1", i < 2 ? "broker-a" : "broker-b", `${q}`]),
    );
    for (const row of rows) assert.equal(row[4], row[5], "consumer offset = broker offset");
    assert.match(table.stdout, /\nDiff Total: 0\n$/);

    const again = await run("consume", "-g", "g1", "-t", TOPIC, "--wait", "0");
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, "", "nothing left for g1");
  });

  it("-s filters by tag; the skipped messages count as consumed for the group", async () => {
    const r = await run("consume", "-g", "g2", "-t", TOPIC, "-s", "TagA", "--from", "first", "--wait", "0");
    assert.equal(r.code, 0, r.stderr);
    const out = lines(r.stdout);
    assert.equal(out.length, 6, r.stdout);
    for (const l of out) assert.match(l, / tags=TagA /);
    for (const row of await progress("g2")) assert.equal(row.diff, 0);
  });

  it("a new group with --from last (the default) starts at the end, and commits that start", async () => {
    const r = await run("consume", "-g", "g3", "-t", TOPIC, "--wait", "0");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "");
    const rows = await progress("g3");
    assert.equal(rows.length, 5);
    for (const row of rows) assert.equal(row.consumerOffset, row.brokerOffset);
  });

  it("--count stops after exactly N messages and commits exactly those; the next run goes on from there", async () => {
    const first = await run("consume", "-g", "g4", "-t", TOPIC, "--from", "first", "--count", "3", "--json");
    assert.equal(first.code, 0, first.stderr);
    const got = lines(first.stdout).map((l) => JSON.parse(l) as { msgId: string; bodyText: string; body: string });
    assert.equal(got.length, 3);
    for (const m of got) assert.equal(Buffer.from(m.body, "base64").toString(), m.bodyText);
    assert.equal(await consumed("g4"), 3);

    const rest = await run("consume", "-g", "g4", "-t", TOPIC, "--wait", "0", "--json");
    assert.equal(rest.code, 0, rest.stderr);
    const ids = [...got, ...lines(rest.stdout).map((l) => JSON.parse(l) as { msgId: string })].map((m) => m.msgId);
    assert.equal(ids.length, 10);
    assert.equal(new Set(ids).size, 10, "no message twice");
  });

  it("--quiet prints no messages, only the summary (and progress lines on stderr)", async () => {
    const r = await run("consume", "-g", "g5", "-t", TOPIC, "--from", "first", "--count", "10", "-q");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /consumed 10 messages of ConsumeTopic as group g5 /);
    assert.ok(!r.stderr.includes("\r") && !r.stderr.includes("\x1b["), "plain lines when not a terminal");
  });

  it("a running consume is in consumerConnection, prints new messages, and on Ctrl-C commits, leaves and exits 0", async () => {
    const consume = spawnNimbus(["consume", "-g", "live", "-t", TOPIC, "-s", "TagA || TagB"], { url });
    try {
      // --from last: the consumer has started when it commits its start offsets.
      while ((await progress("live")).length < 5) {
        assert.equal(consume.child.exitCode, null, `consume ended: ${consume.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const conn = await run("consumerConnection", "-g", "live");
      assert.equal(conn.code, 0, conn.stderr);
      const [row, ...others] = tableRows(conn.stdout);
      assert.equal(others.length, 0);
      assert.deepEqual(row?.slice(1, 5), ["CLUSTERING", "CONSUME_ACTIVELY", "LAST_OFFSET", `${TOPIC}(TagA || TagB)`]);
      const json = JSON.parse((await run("consumerConnection", "-g", "live", "--json")).stdout);
      assert.equal(json.consumerIdList.length, 1);

      assert.equal((await run("send", "-t", TOPIC, "--tags", "TagB", "--body", "while running")).code, 0);
      await consume.waitForStdout(/body=while running\n/);
    } finally {
      consume.child.kill("SIGINT");
    }
    const end = await consume.exited;
    assert.equal(end.code, 0, end.stderr);
    assert.match(end.stderr, /consumed 1 message of ConsumeTopic as group live .*; offsets committed\n$/);
    for (const row of await progress("live")) assert.equal(row.diff, 0);
    const gone = await run("consumerConnection", "-g", "live");
    assert.equal(gone.code, 0);
    assert.deepEqual(tableRows(gone.stdout), []);
    assert.match(gone.stderr, /group live has no live consumer/);
  });

  it("survives the API going away with one line per failed round; on Ctrl-C says whether the commit failed", async () => {
    const own = await startTestBroker();
    const on = { url: own.url };
    assert.equal((await nimbus(["updateTopic", "-t", "Lost", "-b", "broker-a", "-r", "1", "-w", "1"], on)).code, 0);
    assert.equal((await nimbus(["send", "-t", "Lost", "--body", "before"], on)).code, 0);
    const consume = spawnNimbus(["consume", "-g", "g8", "-t", "Lost", "--from", "first"], on);
    try {
      await consume.waitForStdout(/body=before\n/);
      await own.close();
      await consume.waitForStderr(/^nimbus: pulling \(1 of 1 queues failed\): cannot reach the Nimbus API /m);
    } finally {
      consume.child.kill("SIGINT");
    }
    const end = await consume.exited;
    // The consumer commits every 5 s: the last commit failed (exit 1), unless it came before the API went away.
    if (/offsets committed\n$/.test(end.stderr)) assert.equal(end.code, 0, end.stderr);
    else {
      assert.equal(end.code, 1, end.stderr);
      assert.match(end.stderr, /; committing the offsets failed: cannot reach the Nimbus API .*\n$/);
    }
  });

  it("fails with exit 1 and the API's code for an unknown topic or a bad tag expression; 2 for usage", async () => {
    const noTopic = await run("consume", "-g", "g9", "-t", "NoSuchTopic", "--wait", "0");
    assert.equal(noTopic.code, 1);
    assert.match(noTopic.stderr, /^nimbus: TOPIC_NOT_EXIST: [^\n]*\n$/);
    const badExpr = await run("consume", "-g", "g9", "-t", TOPIC, "-s", "||", "--wait", "0");
    assert.equal(badExpr.code, 1);
    assert.match(badExpr.stderr, /^nimbus: PARAMETER_ILLEGAL: subString split error\n$/);
    const badGroup = await run("consumerProgress", "-g", "bad group");
    assert.equal(badGroup.code, 1);
    assert.match(badGroup.stderr, /^nimbus: PARAMETER_ILLEGAL: /);
    for (const args of [
      ["consume", "-t", TOPIC],
      ["consume", "-g", "g9", "-t", TOPIC, "--from", "middle"],
      ["consume", "-g", "g9", "-t", TOPIC, "--count", "-1"],
      ["consumerProgress", "-t", TOPIC],
      ["consumerConnection"],
    ]) {
      const r = await run(...args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /^nimbus: [^\n]+\n$/);
    }
  });
});
