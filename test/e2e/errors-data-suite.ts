/**
 * @module E2E cases: every refused `POST /send` and `POST /pull` answers a 4xx with `{code, message}`
 * and writes nothing (the topic list, routes, queue status and offsets are the same before and after).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_BATCH_BYTES } from "../../lib/protocol/index.js";
import { type Api, b64, expectError, ok, writesNothing } from "../support/http.js";
import { type ServerMode, uniqueName, useTestServer } from "../support/server-fixture.js";
import { pullFrom, sendTo } from "./queues-suite.js";

const FOUR_MIB = 4 * 1024 * 1024;

/** Topic names a user may not use: bad characters, too long, blank, system topics. */
export const ILLEGAL_TOPICS = [
  "has space",
  "slash/y",
  "dot.y",
  "colon:y",
  "hash#y",
  "ünï",
  "x".repeat(128),
  "",
  "TBW102",
  "SCHEDULE_TOPIC_XXXX",
  "RMQ_SYS_TRANS_HALF_TOPIC",
  "rmq_sys_anything",
  "%RETRY%x",
  "%DLQ%x",
];

export function dataErrorCases(mode: ServerMode): void {
  describe("refused sends and pulls write nothing", () => {
    const ctx = useTestServer(mode);
    const topic = uniqueName("Errors");
    const group = uniqueName("CG");
    /** Asserts the state of the test topic (and of `extra` topics) is unchanged by `request`. */
    const unchanged = <T>(request: () => Promise<T>, extra: string[] = []) =>
      writesNothing(ctx.http, [topic, ...extra], request, [group]);
    const rawSend = (http: Api, body: string) =>
      http.raw({ method: "POST", path: "/send", body, headers: { "content-type": "application/json" } });

    it("setup: a topic with 4/4 queues on both brokers and some messages", async () => {
      ok(await ctx.http.put(`/topics/${topic}`, { readQueueNums: 4, writeQueueNums: 4 }));
      ok(await sendTo(ctx.http, topic, "broker-a", 0, "a", "b"));
      ok(
        await ctx.http.put(`/offsets/${group}/${topic}`, {
          offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 1 }],
        }),
      );
    });

    it("malformed JSON and wrong shapes: 400 PARAMETER_ILLEGAL", async () => {
      await unchanged(async () => {
        for (const body of ["{", "not json", `{"topic":"${topic}",}`]) {
          expectError(await rawSend(ctx.http, body), 400, "PARAMETER_ILLEGAL");
        }
        for (const body of [null, [], "text", 42, {}]) {
          expectError(await ctx.http.post("/send", body), 400, "PARAMETER_ILLEGAL");
        }
        expectError(await ctx.http.raw({ method: "POST", path: "/send" }), 400, "PARAMETER_ILLEGAL");
        const good = { body: b64("x") };
        const cases: unknown[] = [
          { messages: [good] },
          { topic },
          { topic, messages: "x" },
          { topic, messages: [{}] },
          { topic, messages: [{ body: 42 }] },
          { topic, messages: [good], extra: 1 },
          { topic, messages: [{ ...good, extra: 1 }] },
          { topic, messages: [{ ...good, tags: 1 }] },
          { topic, messages: [{ ...good, keys: [1] }] },
          { topic, messages: [{ ...good, properties: { a: 1 } }] },
          { topic, messages: [good], queueId: 0 },
          { topic, brokerName: "broker-a", queueId: -1, messages: [good] },
          { topic, brokerName: "broker-a", queueId: 1.5, messages: [good] },
          { topic, brokerName: "broker-a", queueId: "0", messages: [good] },
          { topic, producerGroup: "bad group", messages: [good] },
        ];
        for (const body of cases) {
          expectError(await ctx.http.post("/send", body), 400, "PARAMETER_ILLEGAL");
        }
      });
    });

    it("bad base64 bodies: 400", async () => {
      await unchanged(async () => {
        for (const body of ["not base64!", "YQ", "YQ=", "Y===", "YQ==YQ==", " YQ==", "YQ==\n", "-_8="]) {
          const answer = await ctx.http.post("/send", { topic, messages: [{ body }] });
          assert.equal(answer.status, 400, `body ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`);
          expectError(answer, 400, "PARAMETER_ILLEGAL");
        }
      });
    });

    it("illegal topic names: 400, and nothing is auto-created", async () => {
      await unchanged(
        async () => {
          for (const name of ILLEGAL_TOPICS) {
            const answer = await ctx.http.post("/send", { topic: name, messages: [{ body: b64("x") }] });
            expectError(answer, 400, "PARAMETER_ILLEGAL");
          }
        },
        ILLEGAL_TOPICS.filter((t) => t !== "" && !t.includes("/")),
      );
    });

    it("queues and brokers outside the route: 400", async () => {
      await unchanged(async () => {
        expectError(await sendTo(ctx.http, topic, "broker-a", 4, "x"), 400, "PARAMETER_ILLEGAL");
        expectError(await sendTo(ctx.http, topic, "broker-b", 2 ** 31 - 1, "x"), 400, "PARAMETER_ILLEGAL");
        expectError(await sendTo(ctx.http, topic, "broker-x", 0, "x"), 400, "PARAMETER_ILLEGAL");
        expectError(await pullFrom(ctx.http, topic, "broker-a", 4), 400, "PARAMETER_ILLEGAL");
        expectError(await pullFrom(ctx.http, topic, "broker-x", 0), 400, "PARAMETER_ILLEGAL");
      });
    });

    it("empty batch and empty body: 400", async () => {
      await unchanged(async () => {
        expectError(await ctx.http.post("/send", { topic, messages: [] }), 400, "PARAMETER_ILLEGAL");
        expectError(await ctx.http.post("/send", { topic, messages: [{ body: "" }] }), 400, "MESSAGE_ILLEGAL");
      });
    });

    it("a batch over MAX_BATCH_BYTES of bodies each under 4 MiB: 413 MESSAGE_BODY_TOO_LARGE", async () => {
      await unchanged(async () => {
        const half = b64(Buffer.alloc(MAX_BATCH_BYTES / 2 + 1024, 0x62));
        expectError(
          await ctx.http.post("/send", { topic, messages: [{ body: half }, { body: half }] }),
          413,
          "MESSAGE_BODY_TOO_LARGE",
        );
      });
    });

    it("a body over 4 MiB, alone or among good messages: 413 MESSAGE_BODY_TOO_LARGE", async () => {
      await unchanged(async () => {
        const over = b64(Buffer.alloc(FOUR_MIB + 1, 0x61));
        const good = { body: b64("good") };
        for (const messages of [[{ body: over }], [good, { body: over }, good]]) {
          expectError(
            await ctx.http.post("/send", { topic, brokerName: "broker-a", queueId: 1, messages }),
            413,
            "MESSAGE_BODY_TOO_LARGE",
          );
        }
      });
    });

    it("one bad message among good ones: the whole batch is refused, nothing stored", async () => {
      const good = { body: b64("good") };
      const bad: [unknown, number, string][] = [
        [{ body: "" }, 400, "MESSAGE_ILLEGAL"],
        [{ body: b64("x"), tags: "A|B" }, 400, "MESSAGE_ILLEGAL"],
        [{ body: b64("x"), tags: " padded" }, 400, "MESSAGE_ILLEGAL"],
        [{ body: b64("x"), keys: ["has space"] }, 400, "MESSAGE_ILLEGAL"],
        [{ body: b64("x"), keys: [""] }, 400, "MESSAGE_ILLEGAL"],
        [{ body: b64("x"), properties: { TAGS: "A" } }, 400, "MESSAGE_ILLEGAL"],
        [{ body: b64("x"), properties: { "": "v" } }, 400, "MESSAGE_ILLEGAL"],
        [{ body: b64("x"), delayTimeLevel: 19 }, 400, "PARAMETER_ILLEGAL"],
        [{ body: b64("x"), delayTimeLevel: 3 }, 400, "MESSAGE_ILLEGAL"],
        [{ body: b64("x"), properties: { big: "p".repeat(40 * 1024) } }, 413, "MESSAGE_BODY_TOO_LARGE"],
      ];
      await unchanged(async () => {
        for (const [message, status, code] of bad) {
          for (const where of [{}, { brokerName: "broker-a", queueId: 0 }]) {
            const answer = await ctx.http.post("/send", { topic, ...where, messages: [good, message, good] });
            expectError(answer, status, code);
          }
        }
        const many = Array.from({ length: 1025 }, () => good);
        expectError(await ctx.http.post("/send", { topic, messages: many }), 400, "MESSAGE_ILLEGAL");
      });
    });

    it("a delay level outside 1..18 is refused; 0 is a plain message", async () => {
      await unchanged(async () => {
        for (const level of [19, 100]) {
          expectError(
            await ctx.http.post("/send", { topic, messages: [{ body: b64("x"), delayTimeLevel: level }] }),
            400,
            "PARAMETER_ILLEGAL",
          );
        }
      });
      const sent = ok(await ctx.http.post("/send", { topic, messages: [{ body: b64("x"), delayTimeLevel: 0 }] }));
      assert.ok(sent);
    });

    it("bad pulls: 400 for shapes and names, 404 TOPIC_NOT_EXIST for an unknown topic", async () => {
      await unchanged(async () => {
        const base = { consumerGroup: group, topic, brokerName: "broker-a", queueId: 0, queueOffset: 0 };
        const cases: unknown[] = [
          { ...base, consumerGroup: undefined },
          { ...base, consumerGroup: "bad group" },
          { ...base, topic: "bad topic" },
          { ...base, queueOffset: -1 },
          { ...base, queueOffset: 0.5 },
          { ...base, queueId: -1 },
          { ...base, brokerName: undefined },
          { ...base, extra: true },
          { ...base, subExpression: 42 },
        ];
        for (const body of cases) expectError(await ctx.http.post("/pull", body), 400, "PARAMETER_ILLEGAL");
        const unknown = uniqueName("Unknown");
        expectError(await ctx.http.post("/pull", { ...base, topic: unknown }), 404, "TOPIC_NOT_EXIST");
        expectError(await ctx.http.get(`/topics/${unknown}/route`), 404, "TOPIC_NOT_EXIST");
      });
    });
  });
}
