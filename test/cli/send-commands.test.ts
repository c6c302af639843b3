/**
 * @module The built `nimbus send` and `queryMsgByOffset` against a local broker: one message from text, a
 * file or stdin, a chosen queue, many messages in batches with a rate line, and their errors.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureBuilt, nimbus, startTestBroker, type TestBroker, tableRows } from "../support/cli-runner.js";

interface QueryJson {
  msgId: string;
  tags: string;
  keys: string[];
  properties: Record<string, string>;
  body: string;
  bodyText?: string;
  queueOffset: number;
}

describe("nimbus send and queryMsgByOffset (the built CLI)", () => {
  let broker: TestBroker;
  let url = "";
  let tmp = "";
  const run = (...args: string[]) => nimbus(args, { url });
  const query = async (broker: string, queueId: number, offset: number): Promise<QueryJson> => {
    const r = await run(
      "queryMsgByOffset",
      "-t",
      "SendTopic",
      "-b",
      broker,
      "-i",
      `${queueId}`,
      "-o",
      `${offset}`,
      "--json",
    );
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
    url = broker.url;
    tmp = mkdtempSync(path.join(os.tmpdir(), "nimbus-cli-send-"));
    const created = await run("updateTopic", "-t", "SendTopic", "-b", "broker-a", "-r", "2", "-w", "2");
    assert.equal(created.code, 0, created.stderr);
  });
  after(async () => {
    await broker.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("a send that creates its topic says so, once; a read of a near-miss topic name suggests the real one", async () => {
    const first = await run("send", "-t", "SendTopicNew", "--body", "hello");
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /topic SendTopicNew did not exist; the broker created it \(autoCreateTopicEnable\)/);
    const second = await run("send", "-t", "SendTopicNew", "--body", "again");
    assert.equal(second.code, 0, second.stderr);
    assert.doesNotMatch(second.stderr, /did not exist/);
    const typo = await run("queryMsgByOffset", "-t", "SendTopc", "-b", "broker-a", "-i", "0", "-o", "0");
    assert.notEqual(typo.code, 0);
    assert.match(typo.stderr, /did you mean SendTopic\?/);
    const unlike = await run("queryMsgByOffset", "-t", "Unrelated", "-b", "broker-a", "-i", "0", "-o", "0");
    assert.notEqual(unlike.code, 0);
    assert.doesNotMatch(unlike.stderr, /did you mean/);
  });

  it("sends one message to a chosen queue and prints where it landed; queryMsgByOffset shows it", async () => {
    const sent = await run(
      "send",
      ...["-t", "SendTopic", "-b", "broker-a", "-i", "1", "--tags", "TagA", "--keys", "order-1 order-2"],
      ...["--property", "region=eu", "--body", "Hello"],
    );
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, /^#Broker Name\s+#QID\s+#Queue Offset\s+#Send Result\s+#MsgId\n/);
    const [row] = tableRows(sent.stdout);
    assert.deepEqual(row?.slice(0, 4), ["broker-a", "1", "0", "SEND_OK"]);
    assert.match(row?.[4] ?? "", /^[0-9A-F]{32}$/);

    const shown = await run("queryMsgByOffset", "-t", "SendTopic", "-b", "broker-a", "-i", "1", "-o", "0");
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^Msg ID: +${row?.[4]}$`, "m"));
    assert.match(shown.stdout, /^Tags: +\[TagA\]$/m);
    assert.match(shown.stdout, /^Keys: +\[order-1, order-2\]$/m);
    assert.match(shown.stdout, /^Properties: +\{.*"region":"eu".*\}$/m);
    assert.match(shown.stdout, /^Body: +Hello$/m);
    const json = await query("broker-a", 1, 0);
    assert.equal(json.bodyText, "Hello");
    assert.equal(Buffer.from(json.body, "base64").toString(), "Hello");
  });

  it("--json prints the API's send answer", async () => {
    const r = await run("send", "-t", "SendTopic", "-b", "broker-a", "-i", "0", "--body", "as json", "--json");
    assert.equal(r.code, 0, r.stderr);
    const answer = JSON.parse(r.stdout);
    assert.equal(answer.sendStatus, "SEND_OK");
    assert.deepEqual(answer.messageQueue, { topic: "SendTopic", brokerName: "broker-a", queueId: 0 });
    assert.equal(answer.msgIds.length, 1);
  });

  it("--file sends a file's bytes (binary bodies show as base64), --file - reads stdin", async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10]);
    const file = path.join(tmp, "body.bin");
    writeFileSync(file, bytes);
    const r = await run("send", "-t", "SendTopic", "-b", "broker-a", "-i", "0", "--file", file, "--json");
    assert.equal(r.code, 0, r.stderr);
    const offset = JSON.parse(r.stdout).queueOffset as number;
    const json = await query("broker-a", 0, offset);
    assert.equal(json.body, bytes.toString("base64"));
    assert.equal(json.bodyText, undefined);
    const shown = await run("queryMsgByOffset", "-t", "SendTopic", "-b", "broker-a", "-i", "0", "-o", `${offset}`);
    assert.match(shown.stdout, new RegExp(`^Body: +base64:${bytes.toString("base64").replace(/[+/]/g, "\\$&")}$`, "m"));

    const piped = await nimbus(["send", "-t", "SendTopic", "-b", "broker-a", "-i", "0", "--file", "-", "--json"], {
      url,
      input: "line one\nline two",
    });
    assert.equal(piped.code, 0, piped.stderr);
    const fromStdin = await query("broker-a", 0, JSON.parse(piped.stdout).queueOffset);
    assert.equal(fromStdin.bodyText, "line one\nline two");
  });

  it("--count N --size B sends N messages in batches and ends with the rate; --json has the tallies", async () => {
    const r = await run("send", "-t", "BulkTopic", "--count", "250", "--size", "64", "--batch", "16");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^#Broker Name\s+#QID\s+#Messages\s+#First Offset\s+#Last Offset\n/);
    const rows = tableRows(r.stdout);
    assert.equal(
      rows.reduce((sum, row) => sum + Number(row[2]), 0),
      250,
    );
    assert.match(r.stdout, /\nsent 250 messages \(15\.6 KiB\) to BulkTopic in \d+\.\d s: [\d,.]+ msg\/s, .+\/s\n$/);
    // Not a terminal: progress (when the run is long enough to show any) is plain lines on stderr.
    assert.ok(!r.stderr.includes("\r") && !r.stderr.includes("\x1b["), r.stderr);

    const read = await run("consume", "-g", "reader", "-t", "BulkTopic", "--from", "first", "--wait", "0", "--json");
    const bodies = read.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { bodyText: string }).bodyText);
    assert.equal(bodies.length, 250);
    assert.deepEqual(
      new Set(bodies.map((b) => b.replace(/\.+$/, ""))),
      new Set(Array.from({ length: 250 }, (_, i) => `message ${i + 1} of 250 `)),
    );
    for (const b of bodies) assert.equal(b.length, 64);

    const json = await run("send", "-t", "BulkTopic", "--count", "100", "--body", "same", "--batch", "32", "--json");
    assert.equal(json.code, 0, json.stderr);
    const tally = JSON.parse(json.stdout);
    assert.equal(tally.messages, 100);
    assert.equal(tally.bytes, 400);
    assert.equal(tally.interrupted, false);
    assert.equal(
      tally.queues.reduce((sum: number, q: { messages: number }) => sum + q.messages, 0),
      100,
    );
    const status = JSON.parse((await run("topicStatus", "-t", "BulkTopic", "--json")).stdout);
    assert.equal(
      status.queues.reduce((sum: number, q: { maxOffset: number }) => sum + q.maxOffset, 0),
      350,
    );
  });

  it("refuses bad command lines with exit 2 and API refusals with exit 1", async () => {
    const usage: string[][] = [
      ["send", "-t", "SendTopic"],
      ["send", "-t", "SendTopic", "--body", "x", "--size", "10"],
      ["send", "-t", "SendTopic", "-i", "0", "--body", "x"],
      ["send", "-t", "SendTopic", "--size", "ten"],
      ["send", "-t", "SendTopic", "--body", "x", "--count", "0"],
      ["send", "-t", "SendTopic", "--body", "x", "--property", "novalue"],
      ["queryMsgByOffset", "-t", "SendTopic", "-b", "broker-a", "-i", "0"],
    ];
    for (const args of usage) {
      const r = await run(...args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /^nimbus: [^\n]+\n$/);
    }
    const failures: [string[], RegExp][] = [
      [["send", "-t", "SendTopic", "--tags", "a|b", "--body", "x"], /^nimbus: MESSAGE_ILLEGAL: /],
      [
        ["send", "-t", "SendTopic", "-b", "broker-a", "-i", "7", "--body", "x"],
        /^nimbus: PARAMETER_ILLEGAL: .*queueId 7/,
      ],
      [["send", "-t", "SendTopic", "--file", path.join(tmp, "missing"), "--body-less"], /unknown option/],
      [["send", "-t", "SendTopic", "--file", path.join(tmp, "missing")], /^nimbus: ENOENT: /],
      [["queryMsgByOffset", "-t", "SendTopic", "-b", "broker-a", "-i", "1", "-o", "99"], /^nimbus: QUERY_NOT_FOUND: /],
      [["queryMsgByOffset", "-t", "NoTopic", "-b", "broker-a", "-i", "0", "-o", "0"], /^nimbus: TOPIC_NOT_EXIST: /],
    ];
    for (const [args, pattern] of failures) {
      const r = await run(...args);
      assert.notEqual(r.code, 0, args.join(" "));
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.split("\n").length, 2, `one line: ${r.stderr}`);
    }
  });
});
