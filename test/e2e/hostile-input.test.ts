/**
 * @module Hostile-input findings, each against the local server (no auth, loopback): every
 * bad request is a 4xx with `{code, message}` and writes nothing; the offset beyond the end is clamped; the
 * in-flight byte cap answers SYSTEM_BUSY; HEAD /health answers; a topic deleted under producers behaves as
 * docs/security.md decides.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";
import { BATCH_MEDIA_TYPE, encodeSendFrame } from "../../lib/protocol/index.js";
import { type Api, api, b64, expectError, ok, type RouteAnswer } from "../support/http.js";
import { type QuietServer, startQuietServer } from "../support/quiet-server.js";

const A = "broker-a";

describe("hostile input", () => {
  let server: LocalServer;
  let http: Api;
  let quiet: QuietServer;
  const writes = () => {
    const c = server.storage.counter.snapshot();
    return c.tableWrites + c.objectPuts + c.objectDeletes;
  };
  /** `request` is refused with `status`/`code` and writes nothing. */
  const refused = async (
    call: () => Promise<{ status: number; body: unknown; headers: Headers }>,
    status: number,
    code: string,
  ) => {
    const before = writes();
    const body = expectError(await call(), status, code);
    assert.equal(writes(), before, `${code} wrote nothing`);
    return body;
  };
  const send = (messages: unknown[], topic = "H") => http.post("/send", { topic, brokerName: A, queueId: 0, messages });

  before(async () => {
    quiet = await startQuietServer("local", { maxInFlightBytes: 1024 * 1024 });
    server = quiet.server;
    http = api(server.url);
    ok(await http.put("/topics/H", { readQueueNums: 2, writeQueueNums: 2 }));
    ok(await send([{ body: b64("1") }, { body: b64("2") }, { body: b64("3") }]));
  });
  after(async () => quiet.close());

  it("clamps an offset commit beyond the queue's max offset to it, as RocketMQ does", async () => {
    const table = ok(
      await http.put<{ offsetTable: { offset: number }[] }>("/offsets/G/H", {
        offsetTable: [{ brokerName: A, queueId: 0, offset: 1_000_000 }],
      }),
    );
    assert.deepEqual(
      table.offsetTable.map((e) => e.offset),
      [3],
    );
    const progress = ok(
      await http.get<{ rows: { queueId: number; consumerOffset: number; diff: number }[] }>(
        "/groups/G/progress?topic=H",
      ),
    );
    assert.deepEqual(
      progress.rows.find((r) => r.queueId === 0),
      { ...progress.rows.find((r) => r.queueId === 0), consumerOffset: 3, diff: 0 },
    );
    // The next pull from the committed offset is "no new message", not OFFSET_ILLEGAL back to the start.
    const pulled = ok(
      await http.post<{ pullStatus: string }>("/pull", {
        consumerGroup: "G",
        topic: "H",
        brokerName: A,
        queueId: 0,
        queueOffset: 3,
      }),
    );
    assert.equal(pulled.pullStatus, "NO_NEW_MSG");
  });

  it("refuses __proto__ keys anywhere (properties, top level, escaped, query): 400, nothing written", async () => {
    const raw = (body: string) =>
      http.raw({ method: "POST", path: "/send", body, headers: { "content-type": "application/json" } });
    const message = `{"body":"${b64("x")}","properties":{"__proto__":"x","a":"b"}}`;
    for (const body of [
      `{"topic":"H","messages":[${message}]}`,
      `{"topic":"H","__proto__":{"queueId":1},"messages":[{"body":"${b64("x")}"}]}`,
      `{"topic":"H","messages":[{"body":"${b64("x")}","properties":{"\\u005f_proto__":"x"}}]}`,
    ]) {
      const error = await refused(() => raw(body), 400, "PARAMETER_ILLEGAL");
      assert.match(error.message, /__proto__/);
    }
    await refused(() => http.get("/groups/G/progress?__proto__=x"), 400, "PARAMETER_ILLEGAL");
  });

  it("refuses a __proto__ property in a binary batch too: 400, nothing written", async () => {
    const properties: Record<string, string> = Object.create(null);
    // biome-ignore lint/suspicious/noProto: a property named "__proto__" on a null-prototype object is the hostile input
    properties.__proto__ = "x";
    properties.keep = "y";
    const frame = encodeSendFrame({
      topic: "H",
      brokerName: A,
      queueId: 0,
      messages: [{ body: new TextEncoder().encode("b"), properties }],
    });
    const binary = () =>
      http.raw({ method: "POST", path: "/send", body: frame, headers: { "content-type": BATCH_MEDIA_TYPE } });
    const error = await refused(binary, 400, "MESSAGE_ILLEGAL");
    assert.match(error.message, /__proto__/);
  });

  it("refuses control characters in tags and keys: 400 MESSAGE_ILLEGAL, nothing written", async () => {
    for (const m of [
      { body: b64("x"), tags: "\u001b[31mred" },
      { body: b64("x"), tags: "a\u0007" },
      { body: b64("x"), tags: "\u009b2J" },
      { body: b64("x"), keys: ["k\u001b]0;title\u0007"] },
      { body: b64("x"), keys: "a\nb" },
      { body: b64("x"), tags: "\u202eevil" },
    ])
      await refused(() => send([m]), 400, "MESSAGE_ILLEGAL");
  });

  it("validates a client-set UNIQ_KEY: not empty, not 30,000 characters, not twice in a batch", async () => {
    const withId = (id: string) => ({ body: b64("x"), properties: { UNIQ_KEY: id } });
    await refused(() => send([withId("")]), 400, "PARAMETER_ILLEGAL");
    await refused(() => send([withId("A".repeat(30_000))]), 400, "PARAMETER_ILLEGAL");
    await refused(() => send([withId("has space")]), 400, "PARAMETER_ILLEGAL");
    const twice = await refused(() => send([withId("ABC123"), withId("ABC123")]), 400, "MESSAGE_ILLEGAL");
    assert.match(twice.message, /UNIQ_KEY ABC123 is another message's/);
    const sent = ok(await send([withId("ABC123"), withId("ABC124")]));
    assert.deepEqual((sent as { msgIds: string[] }).msgIds, ["ABC123", "ABC124"]);
  });

  it("refuses system properties the broker sets (REAL_TOPIC, TRAN_MSG, MAX_OFFSET, ...) and control characters in property names", async () => {
    for (const name of [
      "REAL_TOPIC",
      "REAL_QID",
      "TRAN_MSG",
      "PGROUP",
      "MAX_OFFSET",
      "MIN_OFFSET",
      "TAGS",
      "KEYS",
      "RETRY_TOPIC",
      "ORIGIN_MESSAGE_ID",
      "RECONSUME_TIME",
      "MAX_RECONSUME_TIMES",
    ]) {
      const error = await refused(
        () => send([{ body: b64("x"), properties: { [name]: "1" } }]),
        400,
        "MESSAGE_ILLEGAL",
      );
      assert.match(error.message, new RegExp(`property ${name} is set by the broker`));
    }
    await refused(() => send([{ body: b64("x"), properties: { "a\u001bb": "1" } }]), 400, "MESSAGE_ILLEGAL");
  });

  it("refuses topic perm values that are not 2, 4 or 6 (1 and 8 were stored as 0)", async () => {
    for (const perm of [0, 1, 3, 5, 7, 8, 14]) {
      const error = await refused(() => http.put("/topics/H", { perm }), 400, "PARAMETER_ILLEGAL");
      assert.match(error.message, /perm is 2 \(write\), 4 \(read\) or 6/);
    }
    for (const perm of [4, 2, 6]) {
      const route = ok(await http.put<RouteAnswer>("/topics/P", { perm }));
      assert.ok(route.queueDatas.every((q) => q.perm === perm));
    }
  });

  it("refuses web pages of other origins and DNS-rebound host names on the open server: 403, nothing written", async () => {
    /** A raw request with the headers a browser would send (fetch may not set Host). */
    const raw = (headers: Record<string, string>, body: string) =>
      new Promise<{ status: number; body: unknown; headers: Headers }>((resolve, reject) => {
        const req = request(`${server.url}/send`, { method: "POST", headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString()),
              headers: new Headers(),
            }),
          );
        });
        req.on("error", reject);
        req.end(body);
      });
    const message = JSON.stringify({ topic: "csrf", messages: [{ body: b64("x") }] });
    // A "simple" cross-site POST: no preflight, so the broker itself must refuse it.
    const page = await refused(
      () => raw({ "content-type": "text/plain", origin: "https://evil.example" }, message),
      403,
      "NO_PERMISSION",
    );
    assert.match(page.message, /origin https:\/\/evil\.example/);
    const rebound = await refused(
      () => raw({ "content-type": "application/json", host: "evil.example:9876" }, message),
      403,
      "NO_PERMISSION",
    );
    assert.match(rebound.message, /loopback names only/);
    assert.equal((await http.get("/topics/csrf/route")).status, 404, "no topic was auto-created");
    // The console served by the broker itself, and tools without a browser, are of this machine.
    const local = await raw(
      { "content-type": "application/json", origin: server.url.replace("127.0.0.1", "localhost") },
      JSON.stringify({ topic: "H", brokerName: A, queueId: 0, messages: [{ body: b64("ok") }] }),
    );
    assert.equal(local.status, 200, JSON.stringify(local.body));
  });

  it("answers HEAD /health like GET, without a body", async () => {
    const res = await fetch(`${server.url}/health`, { method: "HEAD" });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "");
  });

  it("caps request bytes still arriving: past their share a request's body is dropped unread, 503 SYSTEM_BUSY", async () => {
    // A request that has sent 500 KiB of its 1000 KiB body holds 500 KiB of the 1 MiB cap, nearly all of the half
    // that bodies still arriving may hold: a 200 KiB body, which comes in several reads, does not fit beside it.
    const held = request(`${server.url}/send`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(1000 * 1024) },
    });
    held.on("error", () => {});
    held.write(`{"topic":"H",${" ".repeat(500 * 1024 - 13)}`);
    while (server.inFlightBytes < 500 * 1024) await new Promise((resolve) => setTimeout(resolve, 10));
    const busy = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const second = request(`${server.url}/send`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(200 * 1024) },
      });
      second.on("response", (res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      second.on("error", reject);
      second.end("x".repeat(200 * 1024));
    });
    assert.equal(busy.status, 503);
    assert.equal((JSON.parse(busy.body) as { code: string }).code, "SYSTEM_BUSY");
    held.destroy();
    // Once the held request is gone its bytes are released, and requests pass again.
    while (server.inFlightBytes > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    ok(await send([{ body: b64("after") }]));
  });
});

describe("a topic deleted while producers send (docs/security.md)", () => {
  for (const autoCreateTopic of [true, false]) {
    it(`auto-create ${autoCreateTopic ? "on: the next send re-creates it with the default queue numbers" : "off: sends get TOPIC_NOT_EXIST and write nothing"}`, async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-deleted-"));
      const server = await startLocalServer({
        port: 0,
        storage: { kind: "local", dataDir },
        config: parseNimbusConfig({ autoCreateTopic, defaultTopicQueueNums: 4 }),
        registerIntervalMs: 3_600_000,
      });
      try {
        const http = api(server.url);
        ok(await http.put("/topics/D", { readQueueNums: 1, writeQueueNums: 1 }));
        ok(await http.post("/send", { topic: "D", messages: [{ body: b64("before") }] }));
        ok(await http.delete("/topics/D"));
        const answer = await http.post("/send", { topic: "D", messages: [{ body: b64("after") }] });
        if (autoCreateTopic) {
          ok(answer);
          const route = ok(await http.get<RouteAnswer>("/topics/D/route"));
          assert.ok(
            route.queueDatas.every((q) => q.writeQueueNums === 4),
            "re-created with the default queue numbers",
          );
        } else {
          expectError(answer, 404, "TOPIC_NOT_EXIST");
          expectError(await http.get("/topics/D/route"), 404, "TOPIC_NOT_EXIST");
        }
      } finally {
        await server.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
