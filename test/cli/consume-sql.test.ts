/**
 * @module The built `nimbus consume --sql` against a local broker: only messages whose properties match are
 * printed and the others count as consumed; `consumerConnection` shows the SQL92 subscription; a bad
 * expression exits 1 with PARAMETER_ILLEGAL and its position before anything is sent; `--sql` with `-s` is
 * a usage error (exit 2).
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

const TOPIC = "SqlTopic";

describe("nimbus consume --sql (the built CLI)", () => {
  let broker: TestBroker;
  let url = "";
  const run = (...args: string[]) => nimbus(args, { url });
  const lines = (stdout: string) => stdout.split("\n").filter((l) => l.length > 0);

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
    url = broker.url;
    assert.equal((await run("updateTopic", "-t", TOPIC, "-b", "broker-a", "-r", "2", "-w", "2")).code, 0);
    // amount 0, 50, 100, 150, 200 from eu; one without amount; one whose amount is not a number.
    for (const [body, props] of [
      ["a0", ["amount=0", "region=eu"]],
      ["a50", ["amount=50", "region=eu"]],
      ["a100", ["amount=100", "region=us"]],
      ["a150", ["amount=150", "region=eu"]],
      ["a200", ["amount=200", "region=eu"]],
      ["none", ["region=eu"]],
      ["abc", ["amount=abc", "region=eu"]],
    ] as const) {
      const args = ["send", "-t", TOPIC, "--body", body, ...props.flatMap((p) => ["--property", p])];
      assert.equal((await run(...args)).code, 0);
    }
  });
  after(() => broker.close());

  it("prints only the matching messages; the others count as consumed for the group", async () => {
    const sql = "amount >= 100 AND region = 'eu'";
    const r = await run("consume", "-g", "s1", "-t", TOPIC, "--sql", sql, "--from", "first", "--wait", "0", "--json");
    assert.equal(r.code, 0, r.stderr);
    const bodies = lines(r.stdout).map((l) => (JSON.parse(l) as { bodyText: string }).bodyText);
    assert.deepEqual(bodies.sort(), ["a150", "a200"]);
    const progress = JSON.parse((await run("consumerProgress", "-g", "s1", "-t", TOPIC, "--json")).stdout);
    for (const row of progress.rows as { diff: number }[]) assert.equal(row.diff, 0);
  });

  it("a running consume --sql shows its SQL92 subscription in consumerConnection", async () => {
    const consume = spawnNimbus(["consume", "-g", "s2", "-t", TOPIC, "--sql", "amount IS NULL"], { url });
    try {
      let row: string[] | undefined;
      while (row === undefined) {
        assert.equal(consume.child.exitCode, null, `consume ended: ${consume.stderr()}`);
        row = tableRows((await run("consumerConnection", "-g", "s2")).stdout)[0];
        if (row === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(row[4], `${TOPIC}(SQL92: amount IS NULL)`);
      const json = JSON.parse((await run("consumerConnection", "-g", "s2", "--json")).stdout);
      assert.deepEqual(json.consumers[0].subscriptionDataSet, [
        { topic: TOPIC, subString: "amount IS NULL", expressionType: "SQL92" },
      ]);
    } finally {
      consume.child.kill("SIGINT");
    }
    assert.equal((await consume.exited).code, 0);
  });

  it("a bad expression exits 1 with PARAMETER_ILLEGAL and its position; --sql with -s is a usage error", async () => {
    const bad = await run("consume", "-g", "s3", "-t", TOPIC, "--sql", "amount >", "--wait", "0");
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, "nimbus: PARAMETER_ILLEGAL: SQL92 filter: unexpected end of expression at position 8\n");
    const gone = await run("consumerConnection", "-g", "s3");
    assert.deepEqual(tableRows(gone.stdout), [], "nothing registered");
    const both = await run("consume", "-g", "s3", "-t", TOPIC, "--sql", "a = 1", "-s", "TagA");
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /^nimbus: [^\n]*--sql[^\n]*\n$/);
  });
});
