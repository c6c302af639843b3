/**
 * @module Issue 26, finding 1's last cause: a client that never reads its answers cannot pin the server's memory.
 * The in-flight byte budget keeps an answer's bytes counted until the answer is sent (not when it is handed to
 * the socket), so while answers sit unread new requests get SYSTEM_BUSY; the bytes come back when the client
 * goes, and a client that reads nothing for `answerTimeoutMs` is dropped.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";
import { type Api, api, b64, expectError, ok } from "../support/http.js";

/** Polls `check` until it holds (each try 20 ms apart), at most `tries` times. */
async function eventually(what: string, check: () => boolean, tries = 3000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) return;
    await sleep(20);
  }
  assert.fail(`never: ${what}`);
}

describe("unread answers hold the in-flight budget until sent", () => {
  let server: LocalServer;
  let http: Api;
  let dataDir = "";
  const sockets: Socket[] = [];

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-unread-"));
    server = await startLocalServer({
      port: 0,
      storage: { kind: "local", dataDir },
      registerIntervalMs: 3_600_000,
      retentionIntervalMs: 3_600_000,
      maxInFlightBytes: 8 * 1024 * 1024,
      answerTimeoutMs: 3_600_000,
    });
    http = api(server.url);
    ok(await http.put("/topics/Big", { readQueueNums: 1, writeQueueNums: 1 }));
    const body = b64(Buffer.alloc(1024 * 1024, 3));
    for (let i = 0; i < 6; i++)
      ok(await http.post("/send", { topic: "Big", brokerName: "broker-a", queueId: 0, messages: [{ body }] }));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("counts an unread answer until its client goes, refusing new requests meanwhile", async () => {
    // Two clients ask for ~4 MB of messages as JSON each and never read: more than the kernel's buffers take.
    const pull = JSON.stringify({
      consumerGroup: "G",
      topic: "Big",
      brokerName: "broker-a",
      queueId: 0,
      queueOffset: 0,
    });
    const port = server.port;
    for (let i = 0; i < 2; i++) {
      const socket = connect(port, "127.0.0.1");
      socket.pause();
      socket.write(
        `POST /pull HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(pull)}\r\n\r\n${pull}`,
      );
      sockets.push(socket);
    }
    await eventually("both answers are counted", () => server.inFlightBytes > 2 * 4_000_000);
    const busy = await http.post("/send", { topic: "Big", messages: [{ body: b64(Buffer.alloc(64 * 1024, 1)) }] });
    expectError(busy, 503, "SYSTEM_BUSY");
    for (const s of sockets) s.destroy();
    await eventually("the budget is back once the clients are gone", () => server.inFlightBytes === 0);
    ok(await http.post("/send", { topic: "Big", messages: [{ body: b64("after") }] }));
  });
});
