/**
 * @module The process's budget for requests' bytes in flight holds for the remoting door too, shared with the HTTP
 * door (a local server with a 64 KiB budget): a remoting send larger than what is left is refused SYSTEM_BUSY at once
 * and writes nothing, while an HTTP upload holds part of the budget; once that upload is gone the same send is
 * stored, and every byte is given back once answered. A frame still arriving holds its bytes too, in the share of the
 * budget for requests still arriving (half of it): one whose rest does not fit that share is refused SYSTEM_BUSY by its
 * header's opaque id and the rest of it discarded as it comes (the connection reads on), while a frame that comes
 * whole is served past the share; one that is not whole within its time to arrive (the local server's body timeout)
 * closes its connection and gives its bytes back. Asserted on answers and counts, never on time.
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

/** A SEND_MESSAGE_V2 of `bytes` to `topic`. */
const sendOf = (topic: string, bytes: number) => ({
  code: RequestCode.SEND_MESSAGE_V2,
  extFields: { a: `${topic}P`, b: topic, e: "0", f: "0", g: String(Date.now()), h: "0", i: "" },
  body: new Uint8Array(bytes).fill(1),
});

describe("the remoting door within the process's request-bytes budget", () => {
  const ctx = useTestServer("local", undefined, { maxInFlightBytes: BUDGET });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

  it("refuses a send past what an HTTP upload leaves, stores it once the upload is gone, gives every byte back", async () => {
    const topic = uniqueName("Budgeted");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const c = await RawRemoting.open(ctx.server.server.port);
    const send = (bytes: number) => c.request(sendOf(topic, bytes));
    // Within the share of arriving bytes (32 KiB); with the send's 36 KiB, past the budget (or past the share, when
    // the send comes in pieces): refused either way.
    const held = 30 * 1024;
    const upload = halfUpload(ctx.server.server.port, topic, held);
    try {
      await waitUntil(() => ctx.server.server.inFlightBytes >= held, "the upload's bytes are held");
      const refused = await send(36 * 1024);
      assert.equal(refused.code, ResponseCode.SYSTEM_BUSY, refused.remark);
      assert.equal((await api().topicStatus(topic))[0]?.maxOffset, 0, "the refused send wrote nothing");
      upload.destroy();
      await waitUntil(() => ctx.server.server.inFlightBytes === 0, "the upload's bytes are given back");
      // Within the share of arriving bytes however the frame comes.
      const stored = await send(24 * 1024);
      assert.equal(stored.code, ResponseCode.SUCCESS, stored.remark);
      assert.equal((await api().topicStatus(topic))[0]?.maxOffset, 1);
      await waitUntil(() => ctx.server.server.inFlightBytes === 0, "the answered send's bytes are given back");
    } finally {
      upload.destroy();
      c.close();
    }
  });
});

describe("a remoting frame still arriving, within the budget", () => {
  const ctx = useTestServer("local", undefined, { maxInFlightBytes: BUDGET });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

  it("holds its bytes in the arriving share; one past it is refused by its header, one that comes whole is served", async () => {
    const topic = uniqueName("Arriving");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const first = await RawRemoting.open(ctx.server.server.port);
    const second = await RawRemoting.open(ctx.server.server.port);
    try {
      // 31 of 31.5 KiB, within the 32 KiB share of arriving bytes; whole, it counts as its request alone.
      const arriving = first.partialRequest(sendOf(topic, 31 * 1024 + 512), 31 * 1024);
      await waitUntil(() => ctx.server.server.inFlightBytes >= 31 * 1024, "the first frame's bytes are held");
      // 2 KiB more of a frame still arriving pass the share (not the 64 KiB budget): refused by its header.
      const refused = second.partialRequest(sendOf(topic, 8 * 1024), 2 * 1024);
      const busy = await refused.answer;
      assert.equal(busy.code, ResponseCode.SYSTEM_BUSY, busy.remark);
      refused.finish();
      // A 2 KiB frame written at once comes whole: it is served past the share, within the budget.
      const small = await second.request(sendOf(topic, 2 * 1024));
      assert.equal(
        small.code,
        ResponseCode.SUCCESS,
        `a whole frame is served, the connection reading on after the discarded rest: ${small.remark}`,
      );
      arriving.finish();
      const stored = await arriving.answer;
      assert.equal(stored.code, ResponseCode.SUCCESS, stored.remark);
      assert.equal((await api().topicStatus(topic))[0]?.maxOffset, 2, "the refused frame wrote nothing");
      await waitUntil(() => ctx.server.server.inFlightBytes === 0, "every byte is given back");
      assert.equal(ctx.server.server.requestBytes.arriving, 0, "nothing counts as arriving");
    } finally {
      first.close();
      second.close();
    }
  });
});

describe("a remoting frame whose header comes split while the arriving share is full", () => {
  const ctx = useTestServer("local", undefined, { maxInFlightBytes: BUDGET });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });

  it("is refused SYSTEM_BUSY once its header is in, and the connection serves on", async () => {
    const topic = uniqueName("SplitHeader");
    await createTopic(api(), topic, 1, ["broker-a"]);
    const c = await RawRemoting.open(ctx.server.server.port);
    // An upload still arriving holds the whole share of arriving bytes (half the budget).
    const upload = halfUpload(ctx.server.server.port, topic, BUDGET / 2);
    const send = (bytes: number) => sendOf(topic, bytes);
    try {
      await waitUntil(() => ctx.server.server.inFlightBytes === BUDGET / 2, "the upload holds the arriving share");
      // 6 bytes first (the frame's length and part of its header length): not even they fit, and the frame cannot
      // be refused before its header is in. Its header and part of its body a moment later, most likely a read of
      // their own (when all come in one read, the header is whole at once; the decoder's unit test covers the split
      // itself): still arriving, the frame is refused by its header; its rest, sent after, is discarded.
      const split = c.partialRequest(send(8 * 1024), 6);
      await new Promise((resolve) => setTimeout(resolve, 100));
      split.more(4 * 1024);
      const refused = await Promise.race([
        split.answer,
        c.closed.then(() => assert.fail("the connection was closed instead of the frame refused")),
      ]);
      assert.equal(refused.code, ResponseCode.SYSTEM_BUSY, refused.remark);
      split.finish();
      upload.destroy();
      await waitUntil(() => ctx.server.server.inFlightBytes === 0, "the upload's bytes are given back");
      assert.equal(ctx.server.server.requestBytes.arriving, 0, "nothing counts as arriving");
      const stored = await c.request(send(1024));
      assert.equal(stored.code, ResponseCode.SUCCESS, `the connection serves on: ${stored.remark}`);
      assert.equal((await api().topicStatus(topic))[0]?.maxOffset, 1, "the refused frame wrote nothing");
    } finally {
      upload.destroy();
      c.close();
    }
  });
});

describe("a remoting frame that stops half-way", () => {
  const ctx = useTestServer("local", undefined, { bodyTimeoutMs: 300 });

  it("closes its connection once its time to arrive is up, and gives its bytes back", async () => {
    const c = await RawRemoting.open(ctx.server.server.port);
    try {
      const body = new Uint8Array(40 * 1024).fill(3);
      c.partialRequest({ code: RequestCode.SEND_MESSAGE_V2, extFields: { b: "AnyTopic" }, body }, 20 * 1024);
      await waitUntil(() => ctx.server.server.inFlightBytes >= 20 * 1024, "the half-sent frame's bytes are held");
      await c.closed;
      await waitUntil(() => ctx.server.server.inFlightBytes === 0, "its bytes are given back");
      assert.equal(ctx.server.server.requestBytes.arriving, 0, "nothing counts as arriving");
    } finally {
      c.close();
    }
  });
});
