/**
 * @module The built `nimbus` command's message queries as a RocketMQ user types them: `queryMsgById -i -t`,
 * `queryMsgByUniqueKey -i -t`, `queryMsgByKey -t -k [-b -e -c]` (table, `--json`, the next page's cursor), a topic
 * with `-a +key.index=false` refused with the reason; not found is exit 1 with the API's code; `queryMsgById` with an
 * offset message id and no topic.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { offsetMsgId, physicalOffset } from "../../lib/core/offset-message-id.js";
import { tableRows, useCliBroker } from "../support/cli-runner.js";

describe("nimbus: queryMsgById, queryMsgByUniqueKey, queryMsgByKey (the built CLI)", () => {
  const cli = useCliBroker();
  const run = (line: string) => cli.run(...line.split(" "));

  it("finds messages by id and by key, with a time range and pages", async () => {
    assert.equal((await run("updateTopic -t QT -c DefaultCluster -r 2 -w 2")).code, 0);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sent = await run(`sendMessage -t QT -p hello-${i} -c TagA -k order-1 --json`);
      assert.equal(sent.code, 0, sent.stderr);
      ids.push((JSON.parse(sent.stdout) as { msgIds: string[] }).msgIds[0] as string);
    }
    const byId = await run(`queryMsgById -i ${ids[1]} -t QT`);
    assert.equal(byId.code, 0, byId.stderr);
    assert.match(byId.stdout, new RegExp(`Msg ID: +${ids[1]}\\n`));
    assert.match(byId.stdout, /Body: +hello-1\n/);
    const byUniq = await run(`queryMsgByUniqueKey -i ${ids[2]} -t QT --json`);
    assert.equal(byUniq.code, 0, byUniq.stderr);
    assert.deepEqual(
      (JSON.parse(byUniq.stdout) as { bodyText: string }[]).map((m) => m.bodyText),
      ["hello-2"],
    );

    const byKey = await run("queryMsgByKey -t QT -k order-1");
    assert.equal(byKey.code, 0, byKey.stderr);
    assert.deepEqual(
      tableRows(byKey.stdout).map((r) => r[0]),
      ids,
      "every message with the key, oldest first",
    );
    const paged = await run("queryMsgByKey -t QT -k order-1 -c 2");
    assert.equal(tableRows(paged.stdout).length, 2);
    const cursor = /--cursor (\S+)/.exec(paged.stderr)?.[1];
    assert.ok(cursor, paged.stderr);
    const rest = await run(`queryMsgByKey -t QT -k order-1 -c 2 --cursor ${cursor}`);
    assert.deepEqual(
      tableRows(rest.stdout).map((r) => r[0]),
      [ids[2]],
    );
    assert.doesNotMatch(rest.stderr, /--cursor/);
    const future = await run(`queryMsgByKey -t QT -k order-1 -b ${Date.now() + 3_600_000}`);
    assert.equal(future.code, 1, "begin after the default end (now) is refused");
    assert.match(future.stderr, /^nimbus: PARAMETER_ILLEGAL: begin \d+ is after end/);
    const past = await run("queryMsgByKey -t QT -k order-1 -b 0 -e 1000");
    assert.equal(past.code, 0, past.stderr);
    assert.deepEqual(tableRows(past.stdout), []);
  });

  it("a topic with -a +key.index=false says so; an unknown id is exit 1 QUERY_NOT_FOUND", async () => {
    const created = await run("updateTopic -t QOff -c DefaultCluster -a +key.index=false");
    assert.equal(created.code, 0, created.stderr);
    assert.equal((await run("sendMessage -t QOff -p x -k k1")).code, 0);
    const refused = await run("queryMsgByKey -t QOff -k k1");
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^nimbus: PARAMETER_ILLEGAL: topic QOff does not index its messages' keys/);
    const missing = await run("queryMsgById -i 0A00000710921234ABCD000000000000 -t QOff");
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^nimbus: QUERY_NOT_FOUND: no message with id 0A00000710921234ABCD000000000000/);
  });

  it("queryMsgById takes an offset message id without -t; a UNIQ_KEY without -t is refused naming -t", async () => {
    assert.equal((await run("updateTopic -t QOffsetId -c DefaultCluster -r 2 -w 2")).code, 0);
    const sends: { messageQueue: { brokerName: string; queueId: number }; queueOffset: number; msgIds: string[] }[] =
      [];
    for (let i = 0; i < 3; i++) {
      const sent = await run(`sendMessage -t QOffsetId -p offset-id-${i} --json`);
      assert.equal(sent.code, 0, sent.stderr);
      sends.push(JSON.parse(sent.stdout));
    }
    for (const [i, s] of sends.entries()) {
      // What a 4.x client's SendResult.offsetMsgId holds for this message (any store host).
      const place = physicalOffset("QOffsetId", s.messageQueue.brokerName, s.messageQueue.queueId, s.queueOffset);
      const id = offsetMsgId(Uint8Array.from([127, 0, 0, 1]), 9876, place);
      const found = await run(`queryMsgById -i ${id} --json`);
      assert.equal(found.code, 0, found.stderr);
      const [m] = JSON.parse(found.stdout) as { bodyText: string; msgId: string }[];
      assert.equal(m?.bodyText, `offset-id-${i}`);
      assert.equal(m?.msgId, s.msgIds[0]);
    }
    const uniq = await run(`queryMsgById -i ${sends[0]?.msgIds[0]}`);
    assert.equal(uniq.code, 1);
    assert.match(
      uniq.stderr,
      /^nimbus: PARAMETER_ILLEGAL: .* a message id \(UNIQ_KEY\) does not say where .*give -t <topic>/,
    );
    const first = sends[0];
    assert.ok(first);
    const past = physicalOffset("QOffsetId", first.messageQueue.brokerName, first.messageQueue.queueId, 1_000_000);
    const nowhere = await run(`queryMsgById -i ${offsetMsgId(Uint8Array.from([127, 0, 0, 1]), 9876, past)}`);
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.stderr, /^nimbus: QUERY_NOT_FOUND: no message at offset message id/);
  });
});
