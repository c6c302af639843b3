/**
 * @module The built `nimbus receive` against a local broker: a new group starts at its first receive, `--no-ack`
 * leaves the messages to come back after `--invisible` with attempt=2, a plain receive acks them, `--json` lines
 * carry the receipt handle, a group that received once gets what is sent later on every queue (queues added since
 * included), and bad options are usage errors.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { useCliBroker } from "../support/cli-runner.js";

const TOPIC = "ReceiveTopic";
const LINE = /^broker-a\/\d offset=\d+ attempt=(\d) tags=TagA msgId=[0-9A-F]{32} body=r$/;

describe("nimbus receive (the built CLI)", () => {
  const { run, lines } = useCliBroker();

  before(async () => {
    assert.equal((await run("updateTopic", "-t", TOPIC, "-b", "broker-a", "-r", "2", "-w", "2")).code, 0);
  });

  it("starts a new group at its first receive, leaves --no-ack messages to come back with attempt 2, then acks them", async () => {
    const first = await run("receive", "-g", "rg", "-t", TOPIC, "--wait", "0");
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /received 0 messages/);
    const sent = await run("send", "-t", TOPIC, "--tags", "TagA", "--body", "r", "--count", "4", "--batch", "1");
    assert.equal(sent.code, 0, sent.stderr);
    const held = await run("receive", "-g", "rg", "-t", TOPIC, "--count", "4", "--no-ack", "--invisible", "1");
    assert.equal(held.code, 0, held.stderr);
    assert.deepEqual(
      lines(held.stdout).map((l) => LINE.exec(l)?.[1]),
      ["1", "1", "1", "1"],
      held.stdout,
    );
    assert.match(held.stderr, /not acked/);
    // Long polling wakes when their invisible time (plus the redelivery grace) ends.
    const back = await run("receive", "-g", "rg", "-t", TOPIC, "--count", "4", "--wait", "20", "--json");
    assert.equal(back.code, 0, back.stderr);
    const msgs = lines(back.stdout).map((l) => JSON.parse(l) as { deliveryAttempt: number; receiptHandle: string });
    assert.deepEqual(
      msgs.map((m) => m.deliveryAttempt),
      [2, 2, 2, 2],
    );
    assert.ok(msgs.every((m) => m.receiptHandle.length > 0));
    const none = await run("receive", "-g", "rg", "-t", TOPIC, "--wait", "0");
    assert.match(none.stderr, /received 0 messages/, "acked: nothing comes back");
  });

  it("a group that received once gets later sends from every queue, a broker's queues added since included", async () => {
    const topic = "ReceiveAgainTopic";
    assert.equal((await run("updateTopic", "-t", topic, "-b", "broker-a", "-r", "2", "-w", "2")).code, 0);
    const first = await run("receive", "-g", "rg2", "-t", topic, "--wait", "0");
    assert.match(first.stderr, /received 0 messages/, first.stderr);
    assert.equal((await run("updateTopic", "-t", topic, "-b", "broker-b", "-r", "2", "-w", "2")).code, 0);
    for (const [broker, queue] of [
      ["broker-b", "0"],
      ["broker-b", "1"],
      ["broker-a", "1"],
    ] as const) {
      const sent = await run("send", "-t", topic, "-b", broker, "-i", queue, "--tags", "TagA", "--body", "r");
      assert.equal(sent.code, 0, sent.stderr);
    }
    const again = await run("receive", "-g", "rg2", "-t", topic, "--count", "3", "--wait", "20");
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(
      lines(again.stdout)
        .map((l) => l.split(" ")[0])
        .sort(),
      ["broker-a/1", "broker-b/0", "broker-b/1"],
    );
  });

  it("refuses bad options as usage errors", async () => {
    for (const args of [
      ["--batch", "33"],
      ["--invisible", "0"],
      ["--wait", "21"],
    ]) {
      const r = await run("receive", "-g", "rg", "-t", TOPIC, ...args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    }
  });
});
