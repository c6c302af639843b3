/**
 * @module The built `nimbus` command's `queryMsgTraceById -i <msgId> [-t <traceTopic>]` as a RocketMQ user types
 * it, on a message a traced SDK Producer sent: the trace table, `--json`, an id without a trace, mqadmin's
 * `-c` refused with a hint.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Message } from "../../lib/client/message.js";
import { Producer } from "../../lib/client/producer/producer.js";
import type { TraceRecord } from "../../lib/client/trace/index.js";
import { tableRows, useCliBroker } from "../support/cli-runner.js";

describe("nimbus: queryMsgTraceById (the built CLI)", () => {
  const cli = useCliBroker();
  const run = (line: string) => cli.run(...line.split(" "));

  it("prints a traced message's records; an id without a trace says so; -c is refused with a hint", async () => {
    // Before anything was traced: no trace topic yet, said as "no trace", not as an error.
    const before = await run("queryMsgTraceById -i 7F000001000000000000000000000000");
    assert.equal(before.code, 0, before.stderr);
    assert.match(
      before.stderr,
      /no trace of 7F000001000000000000000000000000: the trace topic RMQ_SYS_TRACE_TOPIC does not exist yet/,
    );
    assert.equal((await run("updateTopic -t TT -c DefaultCluster -r 1 -w 1")).code, 0);
    const producer = new Producer({ producerGroup: "PTraceCli", endpoints: cli.url(), enableMsgTrace: true });
    await producer.start();
    const sent = await producer.send(new Message("TT", "TagA", "order-1", "hello"));
    await producer.shutdown(); // flushes the trace records
    const table = await run(`queryMsgTraceById -i ${sent.msgId}`);
    assert.equal(table.code, 0, table.stderr);
    const rows = tableRows(table.stdout);
    assert.deepEqual(
      rows.map((r) => [r[0], r[1], r[2], r[5]]),
      [["Pub", "PTraceCli", producer.clientId, "success"]],
    );
    const json = await run(`queryMsgTraceById -i ${sent.msgId} -t RMQ_SYS_TRACE_TOPIC --json`);
    assert.equal(json.code, 0, json.stderr);
    const [record, ...more] = JSON.parse(json.stdout) as TraceRecord[];
    assert.equal(more.length, 0);
    assert.deepEqual([record?.msgId, record?.topic, record?.keys], [sent.msgId, "TT", ["order-1"]]);
    const none = await run("queryMsgTraceById -i 7F000001000000000000000000000000");
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "");
    assert.match(none.stderr, /no trace of 7F000001000000000000000000000000 in RMQ_SYS_TRACE_TOPIC/);
    const refused = await run(`queryMsgTraceById -i ${sent.msgId} -c 5`);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /every record of the message is printed/);
  });
});
