/**
 * @module The remoting door within the process's bound on answers its clients have not taken
 * (lib/core/untaken-answers.ts, which the gRPC door's connections share), the process's ledger set near or past its
 * bound by a share of its own, as other connections' unread answers would hold it:
 * - near it, a pull's answer of about 80 KiB is not queued and SYSTEM_BUSY goes in its place; a send's small answer
 *   goes;
 * - past it, a new request is refused SYSTEM_BUSY before any work (a send writes nothing), and the door's own
 *   requests to its clients (NOTIFY_CONSUMER_IDS_CHANGED) are not sent;
 * - with the room back, the same pull is answered and the notices go again.
 * Asserted on answers and the order of a connection's frames, never on time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { PROCESS_UNTAKEN_ANSWERS, UNTAKEN_ANSWERS_FULL } from "../../lib/core/untaken-answers.js";
import { type RemotingCommand, RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { consumerHeartbeat, pullFromStart, RawRemoting, type RawRequest } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const MESSAGES = 20;
const MESSAGE_BYTES = 4 * 1024;
const ledger = PROCESS_UNTAKEN_ANSWERS;

/** The answer to `request`, or a failure once the connection closes without one (never a hang). */
async function ask(c: RawRemoting, request: RawRequest): Promise<RemotingCommand> {
  const closed = c.closed.then(() => {
    throw new Error("the connection closed without an answer");
  });
  return Promise.race([c.request(request), closed]);
}

const sendOf = (topic: string, i: number): RawRequest => ({
  code: RequestCode.SEND_MESSAGE_V2,
  extFields: { a: `${topic}P`, b: topic, e: "0", f: "0", g: String(Date.now()), h: "0", i: "" },
  body: new Uint8Array(MESSAGE_BYTES).fill(i),
});

const notices = (c: RawRemoting) => c.calls.filter((f) => f.code === RequestCode.NOTIFY_CONSUMER_IDS_CHANGED).length;

describe("the remoting door within the process's bound on untaken answers", () => {
  const ctx = useTestServer("local");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

  it("answers SYSTEM_BUSY in place of a large answer past it, and to new requests past it, which write nothing", async () => {
    const topic = uniqueName("Untaken");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const others = ledger.share(); // other connections' unread answers
    const c = await RawRemoting.open(ctx.server.server.port);
    try {
      for (let i = 0; i < MESSAGES; i++) assert.equal((await ask(c, sendOf(topic, i))).code, ResponseCode.SUCCESS);
      const served = await ask(c, pullFromStart(topic));
      assert.equal(served.code, ResponseCode.SUCCESS, served.remark);
      assert.equal(served.extFields.nextBeginOffset, String(MESSAGES));

      others.set(ledger.maxBytes - 32 * 1024);
      const busy = await ask(c, pullFromStart(topic));
      assert.deepEqual(
        [busy.code, busy.remark, busy.body],
        [ResponseCode.SYSTEM_BUSY, UNTAKEN_ANSWERS_FULL, undefined],
      );
      const small = await ask(c, sendOf(topic, MESSAGES));
      assert.equal(small.code, ResponseCode.SUCCESS, "a send's small answer goes");

      others.set(ledger.maxBytes + 1);
      const refused = await ask(c, sendOf(topic, MESSAGES + 1));
      assert.deepEqual([refused.code, refused.remark], [ResponseCode.SYSTEM_BUSY, UNTAKEN_ANSWERS_FULL]);
      assert.equal((await api().topicStatus(topic))[0]?.maxOffset, MESSAGES + 1, "the refused send wrote nothing");

      others.release();
      const again = await ask(c, pullFromStart(topic));
      assert.equal(again.code, ResponseCode.SUCCESS, again.remark);
      assert.equal(again.extFields.nextBeginOffset, String(MESSAGES + 1));
    } finally {
      others.release();
      c.close();
    }
    await waitUntil(() => ledger.held === 0, "every connection's share is given back");
  });

  it("does not send its own requests to clients past it, and sends them again with the room back", async () => {
    const topic = uniqueName("UntakenNotices");
    const group = `${topic}G`;
    await createTopic(api(), topic, 1, ["broker-a"]);
    const others = ledger.share();
    const stays = await RawRemoting.open(ctx.server.server.port);
    const leaves = await RawRemoting.open(ctx.server.server.port);
    const leavesLater = await RawRemoting.open(ctx.server.server.port);
    try {
      for (const [i, c] of [stays, leaves, leavesLater].entries())
        assert.equal((await ask(c, consumerHeartbeat(`${topic}@${i}`, group, topic))).code, ResponseCode.SUCCESS);
      // The same heartbeat again changes no member; the notices of the joins came before its answer.
      assert.equal((await ask(stays, consumerHeartbeat(`${topic}@0`, group, topic))).code, ResponseCode.SUCCESS);
      const heard = notices(stays);
      assert.ok(heard > 0, "the first consumer heard the others join");

      others.set(ledger.maxBytes * 2);
      leaves.close();
      await waitUntil(async () => (await api().consumerIds(group)).length === 2, "the leaving consumer is gone");
      // Any notice to it was written before the answer to this request, on the same connection.
      assert.equal((await ask(stays, consumerHeartbeat(`${topic}@0`, group, topic))).code, ResponseCode.SYSTEM_BUSY);
      assert.equal(notices(stays), heard, "no notice was sent past the bound");

      others.release();
      leavesLater.close();
      await waitUntil(() => notices(stays) === heard + 1, "the next change's notice is sent");
    } finally {
      others.release();
      for (const c of [stays, leaves, leavesLater]) c.close();
    }
  });
});
