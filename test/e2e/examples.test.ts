/**
 * The README's SDK examples (docs/examples) run as a user would run them, each in its own process, against
 * a local broker: the producer's messages reach both consumers; docs/grpc.md's first flow with RocketMQ 5's
 * Node.js client receives the message it sent.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";

const run = promisify(execFile);
const example = (name: string) => fileURLToPath(new URL(`../../docs/examples/${name}.ts`, import.meta.url));

describe("SDK examples (docs/examples)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "nimbus-examples-"));
  let server: LocalServer;
  const runExample = async (name: string) =>
    (
      await run(process.execPath, ["--import", "tsx", example(name)], {
        env: { ...process.env, NIMBUS_URL: server.url, NIMBUS_GRPC: server.grpc?.endpoint ?? "" },
        timeout: 60_000,
      })
    ).stdout;

  before(async () => {
    // Quick check-backs, as `npm run dev -- --transaction-timeout 1000 --transaction-check-interval 1000`.
    server = await startLocalServer({
      port: 0,
      storage: { kind: "local", dataDir },
      grpcPort: 0,
      // Short delay levels, as `npm run dev -- --message-delay-level "1s 2s 2s"`.
      config: parseNimbusConfig({
        transactionTimeoutMs: 1000,
        transactionCheckIntervalMs: 1000,
        messageDelayLevel: "1s 2s 2s",
      }),
    });
  });
  after(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("producer: ten sends, a batch of two, one ordered message", async () => {
    const out = (await runExample("producer")).trim().split("\n");
    assert.equal(out.filter((l) => l.startsWith("SEND_OK ")).length, 10);
    assert.match(out.at(-2) ?? "", /^batch of 2 at offset \d+$/);
    assert.match(out.at(-1) ?? "", /^order-42 goes to broker-[ab]\/[0-3]$/);
  });

  it("gRPC first flow (docs/grpc.md): a SimpleConsumer started before the send receives it", async () => {
    await fetch(`${server.url}/topics/GrpcTopic`, { method: "PUT", body: "{}" });
    const lines = (await runExample("grpc-first-flow")).trim().split("\n");
    const sent = /^sent ([0-9A-F]+)$/.exec(lines[0] ?? "")?.[1];
    assert.ok(sent, lines.join("\n"));
    assert.equal(lines.at(-1), `received ${sent} TagA hello`, lines.join("\n"));
  });

  it("push consumer: prints the first ten tagged messages, then stops", async () => {
    const lines = (await runExample("push-consumer")).trim().split("\n");
    const bodies = lines.map((l) => l.split(" ").slice(1).join(" "));
    assert.equal(bodies.length, 10, lines.join("\n"));
    for (const body of bodies) assert.match(body, /^Tag[AB] (Hello Nimbus \d|batch [12])$/);
    assert.equal(new Set(bodies).size, bodies.length, "no duplicates");
    assert.equal(
      bodies.some((b) => b.startsWith("TagC")),
      false,
      "TagC is not subscribed",
    );
  });

  it("lite pull consumer: polls and commits", async () => {
    const lines = (await runExample("lite-pull-consumer")).trim().split("\n");
    assert.ok(lines.length >= 10);
    const progress = await fetch(`${server.url}/groups/ExampleLitePullGroup/progress?topic=TopicTest`).then(
      (r) => r.json() as Promise<{ rows: { consumerOffset: number }[] }>,
    );
    const committed = progress.rows.reduce((sum, r) => sum + r.consumerOffset, 0);
    assert.ok(committed >= 10, `committed ${committed} messages`);
  });

  it("sql filter: only the orders of 100 and more from eu; a bad expression refused at subscribe", async () => {
    const lines = (await runExample("sql-filter")).trim().split("\n");
    assert.deepEqual(lines.slice(0, -1).sort(), ["order-2 amount=150 region=eu", "order-4 amount=300 region=eu"]);
    assert.equal(lines.at(-1), "refused: SQL92 filter: unexpected end of expression at position 8");
  });

  it("orderly consumer: each order's steps in order, a suspended message again before the next step", async () => {
    const lines = (await runExample("orderly-consumer")).trim().split("\n");
    const steps = new Map<string, string[]>();
    for (const line of lines) {
      const [id, step] = line.split(" ");
      if (id !== undefined && step !== undefined) steps.set(id, [...(steps.get(id) ?? []), step]);
    }
    assert.equal(steps.size, 5, lines.join("\n"));
    const suspended = [...steps].filter(([, s]) => s.includes("paid:"));
    assert.equal(suspended.length, 1, lines.join("\n"));
    for (const [id, s] of steps) {
      const expected = s.includes("paid:") ? ["created", "paid:", "paid", "shipped"] : ["created", "paid", "shipped"];
      assert.deepEqual(s, expected, id);
    }
    assert.ok(
      lines.some((l) => / paid \(reconsumeTimes 1\)$/.test(l)),
      lines.join("\n"),
    );
  });

  it("retry and delay: a message retried twice, a dead letter, a delay level and a deliver time", async () => {
    const lines = (await runExample("retry-and-delay")).trim().split("\n");
    const deliveries = (body: string) =>
      lines.filter((l) => l.startsWith(`${body} delivered`)).map((l) => Number(l.split(" ").at(-1)));
    assert.deepEqual(deliveries("flaky"), [0, 1, 2], lines.join("\n"));
    assert.deepEqual(deliveries("poison"), [0, 1, 2], lines.join("\n"));
    assert.deepEqual(deliveries("delayed by level 2"), [0]);
    assert.deepEqual(deliveries("timer in 3 s"), [0]);
    assert.equal(lines.filter((l) => / waits until \d{4}-/.test(l)).length, 2);
    assert.equal(lines.at(-1), "poison is in %DLQ%ExampleRetryGroup (nimbus resendDlqMsg sends it back)");
  });

  it("transaction producer: commit, rollback, and an unknown outcome settled by a check-back", async () => {
    const lines = (await runExample("transaction-producer")).trim().split("\n");
    assert.match(lines[0] ?? "", /^order-1: COMMIT_MESSAGE \(transaction [0-9A-F]{32}\)$/);
    assert.match(lines[1] ?? "", /^order-2: ROLLBACK_MESSAGE /);
    assert.match(lines[2] ?? "", /^order-3: UNKNOW /);
    assert.ok(lines.includes("check-back for order-3: the order exists, commit"), lines.join("\n"));
    assert.ok(lines.includes("order-3: COMMITTED after a check-back"), lines.join("\n"));
    const route = await fetch(`${server.url}/topics/TxTopic/status`).then(
      (r) => r.json() as Promise<{ queues: { maxOffset: number }[] }>,
    );
    const delivered = route.queues.reduce((sum, q) => sum + q.maxOffset, 0);
    assert.equal(delivered, 2, "order-1 and order-3 delivered, order-2 not");
  });

  it("simple consumer: receives and acks the tagged jobs, one after changeInvisibleDuration", async () => {
    const lines = (await runExample("simple-consumer")).trim().split("\n");
    assert.equal(lines.at(-1), "acked 4", lines.join("\n"));
    const jobs = lines.slice(0, -1);
    assert.equal(jobs.length, 4);
    for (const l of jobs) assert.match(l, /^TagA job [0134] \(attempt 1\)$/);
  });

  it("lambda worker: invocations drain the jobs, the bad one left unacked", async () => {
    const lines = (await runExample("lambda-worker")).trim().split("\n");
    assert.equal(lines.at(-1), "processed 10", lines.join("\n"));
    const results = lines.slice(0, -1).map((l) => JSON.parse(l.replace(/^invocation \d+: /, "")) as { failed: number });
    assert.equal(
      results.reduce((n, r) => n + r.failed, 0),
      1,
      lines.join("\n"),
    );
  });
});
