/**
 * @module The pull loop's prefetch against a local server: while more messages wait, the next pull is
 * sent before the answer in hand is handed on (one pull in flight at a time, offsets in order); flow
 * control holding, or a pull interval, turns prefetch off.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { PullLoop } from "../../lib/client/consumer/pull-loop.js";
import { NimbusApi, type PullRequest, type PullResponse } from "../../lib/client/transport/index.js";
import { compileFilter } from "../../lib/core/filter/index.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import { type LocalServer, startLocalServer } from "../../lib/dev/local-server.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/** The real API, recording what the loop does: each pull's offset and how many were in flight at once. */
class RecordingApi extends NimbusApi {
  readonly events: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  override async pull(req: PullRequest): Promise<PullResponse> {
    this.events.push(`pull@${req.queueOffset}`);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await super.pull(req);
    } finally {
      this.inFlight--;
    }
  }
}

describe("pull loop prefetch", () => {
  let dataDir: string;
  let server: LocalServer;
  const topic = "PrefetchTopic";
  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-prefetch-"));
    server = await startLocalServer({ port: 0, storage: { kind: "local", dataDir } });
    const api = new NimbusApi({ endpoints: server.url });
    await api.updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    const body = new TextEncoder().encode("m");
    for (let i = 0; i < 5; i++) {
      await api.send({
        topic,
        brokerName: "broker-a",
        queueId: 0,
        messages: Array.from({ length: 10 }, () => ({ body })),
      });
    }
  });
  after(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const run = async (flowHold: () => number, pullInterval: number) => {
    const api = new RecordingApi({ endpoints: server.url });
    const offsets: number[] = [];
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    const loop = new PullLoop(
      {
        api,
        consumerGroup: "CG",
        mq: new MessageQueue(topic, "broker-a", 0),
        subscription: () => compileFilter({ type: "TAG", expression: "*" }),
        pullBatchSize: 10,
        pullInterval,
        idleBackoffMillis: 1000,
        idleBackoffMaxMillis: 1000,
        exceptionDelay: 10,
        flowControl: flowHold,
        onFound: (msgs) => {
          api.events.push(`found@${msgs[0]?.queueOffset}`);
          for (const m of msgs) offsets.push(m.queueOffset);
          if (offsets.length === 50) resolveDone();
        },
        onNothing: () => undefined,
        onOffsetIllegal: async () => undefined,
        onError: (err) => assert.fail(String(err)),
      },
      0,
    );
    loop.start();
    const timeout = setTimeout(resolveDone, TEST_TIMEOUT_MS);
    await done;
    clearTimeout(timeout);
    await loop.stop();
    return { api, offsets };
  };

  it("sends the next pull before handing the batch on, one pull in flight, offsets in order", async () => {
    const { api, offsets } = await run(() => 0, 0);
    assert.deepEqual(
      offsets,
      Array.from({ length: 50 }, (_, i) => i),
    );
    assert.deepEqual(api.events.slice(0, 4), ["pull@0", "pull@10", "found@0", "pull@20"]);
    assert.equal(api.maxInFlight, 1);
  });

  it("no prefetch while flow control holds or with a pull interval", async () => {
    let holds = 0;
    // Hold once after the first batch is handed on (then let pulls go): the prefetch check sees the hold.
    const { api } = await run(() => (holds++ === 1 ? 1 : 0), 0);
    assert.deepEqual(api.events.slice(0, 3), ["pull@0", "found@0", "pull@10"]);
    const spaced = await run(() => 0, 1);
    assert.deepEqual(spaced.api.events.slice(0, 3), ["pull@0", "found@0", "pull@10"]);
  });
});
