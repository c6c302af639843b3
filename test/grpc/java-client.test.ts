/**
 * @module RocketMQ's Java client (rocketmq-client-java 5.x, unchanged; test/interop/java) against the gRPC
 * endpoint on the embedded store: its Producer sends with tag, keys and properties, stored as Nimbus messages.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { createTopic } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { javaClientUnavailable, runJavaClient } from "../support/java-interop.js";
import { uniqueName } from "../support/server-fixture.js";
import { storedMessages } from "./producer-suite.js";

const skip = javaClientUnavailable();

describe("RocketMQ's Java client over gRPC", { skip }, () => {
  const ctx = useGrpcServer("local");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

  it("its Producer's messages are stored with their ids, tag, keys and properties", async () => {
    const topic = uniqueName("JavaProduce");
    await createTopic(api(), topic, 2);
    const run = await runJavaClient(["produce", ctx.endpoint, topic, "3", "TagJ"]);
    const ids = run.lines.filter((l) => l.startsWith("sent ")).map((l) => l.slice("sent ".length));
    assert.equal(ids.length, 3, run.stderr);
    const stored = (await storedMessages(api(), topic)).filter((m) => ids.includes(m.msgId));
    assert.equal(stored.length, 3);
    for (const m of stored) {
      const n = Number(m.properties.n);
      assert.equal(m.tags, "TagJ");
      assert.deepEqual(m.keys, [`java-key-${n}`]);
      assert.equal(new TextDecoder().decode(m.body), `java ${n}`);
    }
  });
});
