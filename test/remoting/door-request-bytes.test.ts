/**
 * @module The process's budget for requests' bytes in flight holds for the remoting door too, shared with the HTTP
 * door (a local server with a 64 KiB budget): a remoting send larger than what is left is refused SYSTEM_BUSY at once
 * and writes nothing, while an HTTP upload holds part of the budget; once that upload is gone the same send is
 * stored, and every byte is given back once answered. Asserted on answers and counts, never on time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { halfUpload } from "../support/raw-http.js";
import { RawRemoting } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const BUDGET = 64 * 1024;

describe("the remoting door within the process's request-bytes budget", () => {
  const ctx = useTestServer("local", undefined, { maxInFlightBytes: BUDGET });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

  it("refuses a send past what an HTTP upload leaves, stores it once the upload is gone, gives every byte back", async () => {
    const topic = uniqueName("Budgeted");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const c = await RawRemoting.open(ctx.server.server.port);
    const send = (bytes: number) =>
      c.request({
        code: RequestCode.SEND_MESSAGE_V2,
        extFields: { a: `${topic}P`, b: topic, e: "0", f: "0", g: String(Date.now()), h: "0", i: "" },
        body: new Uint8Array(bytes).fill(1),
      });
    const held = 40 * 1024;
    const upload = halfUpload(ctx.server.server.port, topic, held);
    try {
      await waitUntil(() => ctx.server.server.inFlightBytes >= held, "the upload's bytes are held");
      const refused = await send(32 * 1024);
      assert.equal(refused.code, ResponseCode.SYSTEM_BUSY, refused.remark);
      assert.equal((await api().topicStatus(topic))[0]?.maxOffset, 0, "the refused send wrote nothing");
      upload.destroy();
      await waitUntil(() => ctx.server.server.inFlightBytes === 0, "the upload's bytes are given back");
      const stored = await send(32 * 1024);
      assert.equal(stored.code, ResponseCode.SUCCESS, stored.remark);
      assert.equal((await api().topicStatus(topic))[0]?.maxOffset, 1);
      await waitUntil(() => ctx.server.server.inFlightBytes === 0, "the answered send's bytes are given back");
    } finally {
      upload.destroy();
      c.close();
    }
  });
});
