/**
 * @module A remoting client that asks but does not read (lib/remoting/connection.ts): once over 1 MiB of its answers
 * wait in the socket, its connection is not read; once they have stayed at their level for the stall time (300 ms
 * here, 60 s by default), its connection is closed and its share of the process's untaken answers given back. A
 * client that reads the same answers is served on. A door of the test's own on the test server's broker, its sockets
 * watched for the pause. Asserted on events and counts, never on time.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { type AddressInfo, createServer, type Server } from "node:net";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { UntakenAnswers } from "../../lib/core/untaken-answers.js";
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
      requestBytes: new InFlightBytes(64 * 1024 * 1024),
      limits: { stallMs: 300 },
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

  it("stops reading it past 1 MiB unread, closes it when it takes none for the stall time, serves a reader on", async () => {
    const topic = uniqueName("Stalled");
    await createTopic(new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 }), topic, 1, ["broker-a"]);
    const pull = pullFromStart(topic);
    const reader = await RawRemoting.open(port);
    const stalled = await RawRemoting.open(port);
    try {
      for (let i = 0; i < MESSAGES; i++) {
        const sent = await reader.request({
          code: RequestCode.SEND_MESSAGE_V2,
          extFields: { a: `${topic}P`, b: topic, e: "0", f: "0", g: String(Date.now()), h: "0", i: "" },
          body: new Uint8Array(MESSAGE_BYTES).fill(i),
        });
        assert.equal(sent.code, ResponseCode.SUCCESS, sent.remark);
      }
      stalled.socket.pause(); // asks, never reads
      for (let i = 0; i < PULLS; i++) void stalled.request(pull);
      await waitUntil(() => paused.times > 0, "the door stops reading the client that leaves its answers unread");
      // Its answers stay in the socket until the door closes it: then its share is given back.
      await waitUntil(() => ledger.held === 0, "the connection that takes none of its answers is closed");
      let closed = false;
      void stalled.closed.then(() => {
        closed = true;
      });
      stalled.socket.resume(); // reads what the door had sent, then the end of the connection
      await waitUntil(() => closed, "the client sees its connection closed");
      for (let i = 0; i < PULLS; i++) {
        const answer = await reader.request(pull);
        assert.equal(answer.code, ResponseCode.SUCCESS, answer.remark);
        assert.equal(answer.extFields.nextBeginOffset, String(MESSAGES));
      }
    } finally {
      reader.close();
      stalled.close();
    }
  });
});
