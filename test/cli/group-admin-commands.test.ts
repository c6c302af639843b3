/**
 * @module The built `nimbus resetOffsetByTime` and `consumerStatus` against a local broker: `-s` as
 * epoch ms, as `yyyy-MM-dd#HH:mm:ss:SSS`, `first` and `now`; a running orderly consumer moved by a reset
 * without a restart; consumerStatus rows of a running orderly consumer; consumerConnection's note on a
 * member whose subscription differs; bad `-s` is a usage error (exit 2) that writes nothing.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parseResetTime } from "../../lib/cli/group-admin-commands.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { ensureBuilt, nimbus, startTestBroker, type TestBroker, tableRows } from "../support/cli-runner.js";
import { fastTimings, waitUntil } from "../support/consumer-helpers.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const TOPIC = "ResetTopic";

/** `yyyy-MM-dd#HH:mm:ss:SSS` in local time, as mqadmin's `-s`. */
function mqadminTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}#${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}:${p(d.getMilliseconds(), 3)}`;
}

describe("nimbus resetOffsetByTime and consumerStatus (the built CLI)", () => {
  let broker: TestBroker;
  let url = "";
  const run = (...args: string[]) => nimbus(args, { url });
  const api = () => new NimbusApi({ endpoints: url, timeoutMs: TEST_TIMEOUT_MS });
  let middle = 0;
  const consumers: PushConsumer[] = [];

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
    url = broker.url;
    assert.equal((await run("updateTopic", "-t", TOPIC, "-b", "broker-a", "-r", "2", "-w", "2")).code, 0);
    const send = (body: string) =>
      Promise.all(
        [0, 1].map((queueId) =>
          api().send({
            topic: TOPIC,
            brokerName: "broker-a",
            queueId,
            messages: Array.from({ length: 5 }, () => ({ body: new TextEncoder().encode(body) })),
          }),
        ),
      );
    await send("early");
    middle = Date.now() + 1;
    await waitUntil(() => Date.now() > middle, "the clock passed the middle");
    await send("late");
  });
  after(async () => {
    await Promise.all(consumers.map((c) => c.shutdown()));
    await broker.close();
  });

  it("parses -s as mqadmin does", () => {
    assert.equal(parseResetTime("now"), "now");
    assert.equal(parseResetTime("1700000000000"), 1_700_000_000_000);
    assert.equal(parseResetTime("2026-11-30#12:34:56:789"), new Date(2026, 10, 30, 12, 34, 56, 789).getTime());
    for (const bad of ["2026-11-30 12:34:56", "2026-13-01#00:00:00:000", "yesterday", "-5"]) {
      assert.throws(() => parseResetTime(bad), /expected ms since the epoch/);
    }
  });

  it("resets a group by epoch ms, by mqadmin's time, to first and to now", async () => {
    const byMs = await run("resetOffsetByTime", "-g", "gReset", "-t", TOPIC, "-s", String(middle));
    assert.equal(byMs.code, 0, byMs.stderr);
    assert.deepEqual(tableRows(byMs.stdout), [
      ["broker-a", "0", "5"],
      ["broker-a", "1", "5"],
    ]);
    assert.match(byMs.stderr, /live consumers move there/);
    const first = JSON.parse(
      (await run("resetOffsetByTime", "-g", "gReset", "-t", TOPIC, "-s", "first", "--json")).stdout,
    );
    assert.deepEqual(
      first.offsetTable.map((e: { offset: number }) => e.offset),
      [0, 0],
    );
    const byTime = await run("resetOffsetByTime", "-g", "gReset", "-t", TOPIC, "-s", mqadminTime(middle), "--json");
    assert.equal(byTime.code, 0, byTime.stderr);
    assert.deepEqual(
      JSON.parse(byTime.stdout).offsetTable.map((e: { offset: number }) => e.offset),
      [5, 5],
    );
    await run("resetOffsetByTime", "-g", "gReset", "-t", TOPIC, "-s", "now");
    assert.deepEqual(
      (await api().queryOffsets("gReset", TOPIC)).map((e) => e.offset),
      [10, 10],
    );
  });

  it("bad -s is a usage error and writes nothing", async () => {
    const r = await run("resetOffsetByTime", "-g", "gBad", "-t", TOPIC, "-s", "yesterday");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^nimbus: .*expected ms since the epoch/);
    assert.deepEqual(await api().queryOffsets("gBad", TOPIC), []);
  });

  it("a running orderly consumer: consumerStatus shows its locked queues; a reset moves it without a restart", async () => {
    const seen: string[] = [];
    const consumer = new PushConsumer({
      consumerGroup: "gLive",
      endpoints: url,
      timeoutMs: TEST_TIMEOUT_MS,
      ...fastTimings(),
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
    });
    consumers.push(consumer);
    consumer.subscribe(TOPIC, "*");
    consumer.registerMessageListenerOrderly((msgs) => {
      for (const m of msgs) seen.push(m.bodyText);
      return "SUCCESS";
    });
    await consumer.start();
    await waitUntil(() => seen.length === 20, "everything consumed once", TEST_TIMEOUT_MS);
    await waitUntil(
      async () => {
        const status = await run("consumerStatus", "-g", "gLive");
        // The group's own topic (a CLUSTERING consumer also holds its %RETRY% queue).
        const rows = tableRows(status.stdout).filter((r) => !(r[1] ?? "").startsWith("%RETRY%"));
        return rows.length === 2 && rows.every((r) => r[0] === consumer.clientId && r[2] === "yes" && r[5] === "10");
      },
      "consumerStatus: 2 locked queues at offset 10",
      TEST_TIMEOUT_MS,
    );
    const reset = await run("resetOffsetByTime", "-g", "gLive", "-t", TOPIC, "-s", String(middle));
    assert.equal(reset.code, 0, reset.stderr);
    await waitUntil(() => seen.length === 30, "the late half consumed again", TEST_TIMEOUT_MS);
    assert.deepEqual(seen.slice(20), Array(10).fill("late"));

    // A second member subscribing another tag: both flagged (no subscription is shared by most members).
    const odd = new PushConsumer({
      consumerGroup: "gLive",
      endpoints: url,
      ...fastTimings(),
      onError: () => undefined,
    });
    consumers.push(odd);
    odd.subscribe(TOPIC, "TagX");
    odd.registerMessageListenerOrderly(() => "SUCCESS");
    await odd.start();
    const conn = await run("consumerConnection", "-g", "gLive");
    assert.equal(conn.code, 0, conn.stderr);
    assert.match(conn.stderr, new RegExp(`${odd.clientId.replace(/[#.]/g, "\\$&")}: its subscription differs`));
  });
});
