/**
 * @module A remoting client that asks but does not read (lib/remoting/connection.ts): once over 1 MiB of its answers
 * wait in the socket, its connection is not read (its further requests wait in the kernel); once it reads, every
 * answer comes and its share of the process's untaken answers is given back. A door of the test's own on the test
 * server's broker, its sockets watched for the pause. Asserted on events and counts, never on time.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { type AddressInfo, createServer, type Server } from "node:net";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { UntakenAnswers } from "../../lib/core/untaken-answers.js";
import { listenServer } from "../../lib/dev/placed-listen.js";
import { InFlightBytes } from "../../lib/dev/server-guard.js";
import { RemotingDoor, RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { pullFromStart, RawRemoting } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const MESSAGE_BYTES = 256 * 1024;
const MESSAGES = 12; // 3 MiB: within one pull's 4 MiB
const PULLS = 8; // 24 MiB of answers: more than loopback's buffers hold, under the connection's 32 MiB

describe("a remoting client that asks but does not read", () => {
  const ctx = useTestServer("local");
  const ledger = new UntakenAnswers(1024 * 1024 * 1024);
  let door: RemotingDoor;
  let server: Server;
  let port = 0;
  /** Pauses of the door's sockets (it stops reading a client that leaves too much unread). */
  const paused = { times: 0 };
  before(async () => {
    door = new RemotingDoor({
      context: ctx.server.server.context,
      brokerNames: ["broker-a"],
      host: "127.0.0.1",
      listen: listenServer,
      requestBytes: new InFlightBytes(64 * 1024 * 1024),
      untakenAnswers: ledger,
    });
    server = createServer((socket) => {
      socket.on("pause", () => paused.times++);
      door.accept(socket, "broker-a");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.close();
    await door.close();
  });

  it("stops reading it past 1 MiB unread, and answers everything once it reads", async () => {
    const topic = uniqueName("Unread");
    await createTopic(new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 }), topic, 1, ["broker-a"]);
    const pull = pullFromStart(topic);
    const producer = await RawRemoting.open(port);
    const unread = await RawRemoting.open(port);
    try {
      for (let i = 0; i < MESSAGES; i++) {
        const sent = await producer.request({
          code: RequestCode.SEND_MESSAGE_V2,
          extFields: { a: `${topic}P`, b: topic, e: "0", f: "0", g: String(Date.now()), h: "0", i: "" },
          body: new Uint8Array(MESSAGE_BYTES).fill(i),
        });
        assert.equal(sent.code, ResponseCode.SUCCESS, sent.remark);
      }
      unread.socket.pause(); // asks, does not read
      const answers = Array.from({ length: PULLS }, () => unread.request(pull));
      await waitUntil(() => paused.times > 0, "the door stops reading the client that leaves its answers unread");
      assert.ok(ledger.held > 1024 * 1024, `its answers wait in the socket: ${ledger.held} bytes`);
      unread.socket.resume();
      for (const answer of await Promise.all(answers)) {
        assert.equal(answer.code, ResponseCode.SUCCESS, answer.remark);
        assert.equal(answer.extFields.nextBeginOffset, String(MESSAGES));
      }
      await waitUntil(() => ledger.held === 0, "every answer taken, its share is given back");
      const after = await unread.request(pull);
      assert.equal(after.code, ResponseCode.SUCCESS, "the connection is read again");
    } finally {
      producer.close();
      unread.close();
    }
  });
});
