/**
 * @module The SDK's pooled connections against a local server: requests one after another reuse one
 * kept-alive connection; pulls (idempotent) are pipelined on one connection when the pool has one; a
 * transport with `binaryBatches: false` still speaks JSON to the same server.
 */
import assert from "node:assert/strict";
import diagnostics from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";

/** Counts the new connections this process opens to `origin` (undici's `undici:client:connected`). */
function countConnections(origin: string) {
  let connections = 0;
  const onConnected = (message: unknown) => {
    const { connectParams } = message as { connectParams: { origin?: string | URL; hostname: string; port: string } };
    if (String(connectParams.origin ?? `http://${connectParams.hostname}:${connectParams.port}`).startsWith(origin))
      connections++;
  };
  diagnostics.subscribe("undici:client:connected", onConnected);
  return {
    get count() {
      return connections;
    },
    stop: () => diagnostics.unsubscribe("undici:client:connected", onConnected),
  };
}

describe("SDK transport: keep-alive pool and pipelining", () => {
  let dataDir: string;
  let server: LocalServer;
  const topic = "PoolTopic";
  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-pool-"));
    server = await startLocalServer({ port: 0, storage: { kind: "local", dataDir } });
    await new NimbusApi({ endpoints: server.url }).updateTopic(topic, {
      readQueueNums: 1,
      writeQueueNums: 1,
      brokerNames: ["broker-a"],
    });
  });
  after(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("30 requests one after another use one connection", async () => {
    const counter = countConnections(server.url);
    try {
      const api = new NimbusApi({ endpoints: server.url, connections: {} });
      for (let i = 0; i < 10; i++) await api.health();
      for (let i = 0; i < 20; i++) {
        await api.send({ topic, brokerName: "broker-a", queueId: 0, messages: [{ body: new Uint8Array([i]) }] });
      }
      assert.equal(counter.count, 1);
    } finally {
      counter.stop();
    }
  });

  it("8 concurrent pulls on a pool of one connection share it, each answered its own", async () => {
    const counter = countConnections(server.url);
    try {
      const api = new NimbusApi({ endpoints: server.url, connections: { connections: 1, pipelining: 8 } });
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api.pull({ consumerGroup: "CG", topic, brokerName: "broker-a", queueId: 0, queueOffset: i, maxMsgNums: 1 }),
        ),
      );
      assert.deepEqual(
        answers.map((a) => a.messages.map((m) => [m.queueOffset, m.body[0]])),
        Array.from({ length: 8 }, (_, i) => [[i, i]]),
      );
      assert.equal(counter.count, 1);
    } finally {
      counter.stop();
    }
  });

  it("a JSON transport (binaryBatches: false) reads the same messages", async () => {
    const json = new NimbusApi({ endpoints: server.url, binaryBatches: false });
    const binary = new NimbusApi({ endpoints: server.url });
    const req = { consumerGroup: "CG", topic, brokerName: "broker-a", queueId: 0, queueOffset: 0, maxMsgNums: 32 };
    assert.deepEqual(await json.pull(req), await binary.pull(req));
  });

  it("a broker older than binary batches: the SDK's send falls back to JSON and stays there", async () => {
    // In front of the broker, a proxy that makes every body JSON to it, as an older broker reads them:
    // it refuses a frame as "not valid JSON" (400, nothing written), as brokers before binary batches did.
    const proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (String(req.headers["content-type"] ?? "").includes("vnd.nimbus.batch")) framesSeen++;
        const headers = { ...req.headers, "content-type": "application/json", accept: "application/json" };
        const upstream = http.request(`${server.url}${req.url ?? "/"}`, { method: req.method, headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        });
        upstream.end(Buffer.concat(chunks));
      });
    });
    let framesSeen = 0;
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const api = new NimbusApi({ endpoints: proxyUrl, connections: {} });
    const via = { baseUrl: proxyUrl }; // not the broker's own address from its route
    try {
      const target = { topic, brokerName: "broker-a", queueId: 0 };
      const first = await api.send({ ...target, messages: [{ body: new Uint8Array([41]) }] }, via);
      const second = await api.send({ ...target, messages: [{ body: new Uint8Array([42]) }] }, via);
      assert.equal(second.queueOffset, first.queueOffset + 1, "each stored once");
      assert.equal(framesSeen, 1, "one frame tried, then JSON");
      const read = await api.pull(
        { consumerGroup: "CG", ...target, queueOffset: first.queueOffset, maxMsgNums: 2 },
        via,
      );
      assert.deepEqual(
        read.messages.map((m) => m.body[0]),
        [41, 42],
      );
    } finally {
      await api.close();
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  });
});

describe("SDK transport: pipelining on the wire", () => {
  const sockets: net.Socket[] = [];
  let raw: net.Server;
  let headsBeforeAnswer = 0;
  let connections = 0;
  const pullAnswer = JSON.stringify({
    pullStatus: "NO_NEW_MSG",
    nextBeginOffset: 0,
    minOffset: 0,
    maxOffset: 0,
    messages: [],
  });
  before(async () => {
    // A server that answers nothing until two requests have arrived on one connection: only pipelining
    // (a second request written before the first is answered) gets any answer from it.
    raw = net.createServer((socket) => {
      connections++;
      sockets.push(socket);
      let buffered = Buffer.alloc(0);
      let requests = 0;
      socket.on("data", (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        for (;;) {
          const headEnd = buffered.indexOf("\r\n\r\n");
          if (headEnd < 0) break;
          const head = buffered.subarray(0, headEnd).toString("latin1");
          const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          if (buffered.byteLength < headEnd + 4 + length) break;
          buffered = buffered.subarray(headEnd + 4 + length);
          requests++;
        }
        if (requests === 2) {
          headsBeforeAnswer = requests;
          const answer = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${pullAnswer.length}\r\n\r\n${pullAnswer}`;
          socket.write(answer + answer);
        }
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => raw.close(r));
  });

  it("two pulls go out on one connection before either is answered", async () => {
    const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    const api = new NimbusApi({ endpoints: rawUrl, connections: { connections: 1, pipelining: 2 } });
    try {
      const pull = (queueOffset: number) =>
        api.pull(
          { consumerGroup: "CG", topic: "Wire", brokerName: "broker-a", queueId: 0, queueOffset },
          { baseUrl: rawUrl },
        );
      const answers = await Promise.all([pull(0), pull(1)]);
      assert.deepEqual(
        answers.map((a) => a.pullStatus),
        ["NO_NEW_MSG", "NO_NEW_MSG"],
      );
      assert.equal(headsBeforeAnswer, 2, "both requests were on the wire, unanswered, at once");
      assert.equal(connections, 1);
    } finally {
      await api.close();
    }
  });
});
