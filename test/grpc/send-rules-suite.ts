/**
 * @module One send rule for every door (lib/broker/produce): each hostile send — a system topic (`%RETRY%`,
 * `%DLQ%`, `rmq_sys_`), a property the broker sets, a property named `__proto__`, a control character in a
 * property's name or value — is refused through the HTTP JSON send, a binary batch, a half message and gRPC
 * SendMessage (NORMAL and TRANSACTION), each with its door's code, and writes nothing. A property named like an
 * Object method (`constructor`) is data like any other: stored, and read back as sent, whichever door sent it.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Client, credentials } from "@grpc/grpc-js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { BATCH_MEDIA_TYPE, encodeSendFrame } from "../../lib/protocol/index.js";
import { rawClient, unaryCall } from "../support/grpc-raw.js";
import { type Api, api, b64 } from "../support/http.js";
import { type QuietServer, startQuietServer } from "../support/quiet-server.js";
import { type ServerMode, uniqueName } from "../support/server-fixture.js";
import { storedMessages } from "./producer-suite.js";

type Properties = Record<string, string>;
/** A send through one door: "stored", or the code it was refused with. */
type Door = (topic: string, properties: Properties, id: string) => Promise<string>;

const body = new TextEncoder().encode("rule");

export function sendRulesCases(mode: ServerMode): void {
  describe(`one send rule for every door: HTTP JSON, binary batch, half message, gRPC (${mode})`, () => {
    let quiet: QuietServer;
    let http: Api;
    let grpc: Client;
    const topic = uniqueName("SendRules");
    const group = uniqueName("gSendRules");
    before(async () => {
      quiet = await startQuietServer(mode, { grpcPort: 0, delayedDeliveryIntervalMs: 3_600_000 });
      http = api(quiet.server.url);
      grpc = rawClient(quiet.server.grpc?.endpoint ?? "", credentials.createInsecure());
      const topics = quiet.server.context.broker.topics;
      await topics.upsert(topic, { readQueueNums: 1, writeQueueNums: 1 });
      // The system topics exist, so a send is refused for what it names, not as an unknown topic.
      for (const system of [`%RETRY%${group}`, `%DLQ%${group}`, "rmq_sys_rules"]) await topics.autoCreate(system, 1);
    });
    after(async () => {
      grpc?.close();
      await quiet?.close();
    });

    const httpCode = (answer: { status: number; body: unknown }) =>
      answer.status < 300 ? "stored" : String((answer.body as { code?: unknown }).code);
    const grpcSend =
      (messageType: "NORMAL" | "TRANSACTION"): Door =>
      async (t, properties, id) => {
        const answer = await unaryCall(grpc, "SendMessage", {
          messages: [
            { topic: { name: t }, body, userProperties: properties, systemProperties: { messageId: id, messageType } },
          ],
        });
        return answer.status?.code === "OK" ? "stored" : String(answer.status?.code);
      };
    const doors: Record<string, Door> = {
      "HTTP JSON": async (t, properties, id) =>
        httpCode(
          await http.post("/send", {
            topic: t,
            messages: [{ body: b64("rule"), properties: { ...properties, UNIQ_KEY: id } }],
          }),
        ),
      "binary batch": async (t, properties, id) =>
        httpCode(
          await http.raw({
            method: "POST",
            path: "/send",
            body: encodeSendFrame({ topic: t, messages: [{ body, properties: { ...properties, UNIQ_KEY: id } }] }),
            headers: { "content-type": BATCH_MEDIA_TYPE },
          }),
        ),
      "half message": async (t, properties, id) =>
        httpCode(
          await http.post("/transactions", {
            producerGroup: "pSendRules",
            topic: t,
            message: { body: b64("rule"), properties: { ...properties, UNIQ_KEY: id } },
          }),
        ),
      "gRPC SendMessage": grpcSend("NORMAL"),
      "gRPC SendMessage (TRANSACTION)": grpcSend("TRANSACTION"),
    };
    const writes = () => {
      const c = quiet.server.storage.counter.snapshot();
      return c.tableWrites + c.objectPuts + c.objectDeletes;
    };
    let ids = 0;
    const nextId = () => `RULES${(++ids).toString().padStart(27, "0")}`;

    const refusals: { what: string; topic?: string; properties?: Properties }[] = [
      { what: "a group's retry topic", topic: `%RETRY%${group}` },
      { what: "a group's dead-letter topic", topic: `%DLQ%${group}` },
      { what: "an rmq_sys_ topic", topic: "rmq_sys_rules" },
      { what: "a property the broker sets", properties: { TRAN_MSG: "true" } },
      { what: "a property named __proto__", properties: { ["__proto__"]: "x", kept: "y" } },
      { what: "a control character in a property name", properties: { "a\u001bb": "x" } },
      { what: "a control character in a property value", properties: { color: "\u001b[31mred" } },
      { what: "RocketMQ's property separator in a value", properties: { forged: "x\u0002TRAN_MSG\u0001true" } },
    ];
    for (const { what, topic: t = topic, properties = {} } of refusals) {
      it(`${what}: refused by every door, nothing written`, async () => {
        for (const [door, send] of Object.entries(doors)) {
          const before = writes();
          const answer = await send(t, properties, nextId());
          assert.notEqual(answer, "stored", `${door} stored ${what}`);
          assert.equal(writes(), before, `${door} wrote nothing for ${what} (${answer})`);
        }
      });
    }

    it("a property named constructor or toString is data: stored and read back as sent through every door", async () => {
      const properties = { constructor: "c", toString: "t", hasOwnProperty: "h" };
      const sent: string[] = [];
      for (const [door, send] of Object.entries(doors)) {
        if (door.includes("half") || door.includes("TRANSACTION")) continue; // not readable before a commit
        const id = nextId();
        assert.equal(await send(topic, properties, id), "stored", door);
        sent.push(id);
      }
      const stored = await storedMessages(new NimbusApi({ endpoints: quiet.server.url, timeoutMs: 10_000 }), topic);
      assert.deepEqual(stored.map((m) => m.properties.UNIQ_KEY).sort(), sent.sort());
      for (const m of stored) {
        for (const [name, value] of Object.entries(properties)) {
          assert.ok(Object.hasOwn(m.properties, name), `${name} is an own property`);
          assert.equal(m.properties[name], value);
        }
      }
    });
  });
}
