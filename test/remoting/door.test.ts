/**
 * @module The remoting door spoken to frame by frame (test/support/remoting-raw.ts), on both storage modes: the
 * frame codec both ways (JSON and ROCKETMQ headers); HTTP still served on the same port; hostile frames (cut short,
 * an oversized length, a header that is not JSON, a header longer than its frame, an unknown code) get an error
 * answer or a closed connection, and write nothing; a pull on an empty queue waits and is woken by the append
 * (the path taken, not the time), and a pull whose connection closes stops waiting; a connection whose heartbeats
 * change their client id is listed under the newest only.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import {
  decodeBatch,
  decodeFrame,
  encodeFrame,
  FrameDecoder,
  FrameError,
  MAX_REQUEST_FRAME_BYTES,
  parseProperties,
  propertiesString,
  type RemotingCommand,
  RequestCode,
  ResponseCode,
  SERIALIZE_JSON,
  SERIALIZE_ROCKETMQ,
} from "../../lib/remoting/index.js";
import { createTopic, waitUntil } from "../support/consumer-helpers.js";
import { json, RawRemoting } from "../support/remoting-raw.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";

const command = (over: Partial<RemotingCommand> = {}): RemotingCommand => ({
  code: 105,
  language: "JAVA",
  version: 453,
  opaque: 7,
  flag: 0,
  remark: "r",
  extFields: { topic: "T", ключ: "значение" },
  serializeType: SERIALIZE_JSON,
  body: new Uint8Array([1, 2, 3]),
  ...over,
});

describe("remoting frames", () => {
  it("encode and decode both ways, in both header serializations", () => {
    for (const serializeType of [SERIALIZE_JSON, SERIALIZE_ROCKETMQ] as const) {
      const c = command({ serializeType });
      const frame = encodeFrame(c);
      assert.equal(frame.readUInt32BE(0), frame.byteLength - 4);
      assert.equal(frame[4], serializeType);
      const decoded = decodeFrame(frame.subarray(4));
      assert.deepEqual({ ...decoded, extFields: { ...decoded.extFields } }, c);
    }
  });

  it("reassemble frames cut anywhere and refuse oversized lengths and bad headers", () => {
    const two = Buffer.concat([encodeFrame(command({ opaque: 1 })), encodeFrame(command({ opaque: 2 }))]);
    const decoder = new FrameDecoder();
    const got: number[] = [];
    for (let i = 0; i < two.byteLength; i += 5) got.push(...decoder.push(two.subarray(i, i + 5)).map((c) => c.opaque));
    assert.deepEqual(got, [1, 2]);
    const big = Buffer.alloc(8);
    big.writeUInt32BE(MAX_REQUEST_FRAME_BYTES + 1, 0);
    assert.throws(() => new FrameDecoder().push(big), FrameError);
    const notJson = Buffer.from("\u0000\u0000\u0000\u0007\u0000\u0000\u0000\u0003{x}", "latin1");
    assert.throws(() => new FrameDecoder().push(notJson), FrameError);
    const longHeader = Buffer.from([0, 0, 0, 8, 0, 0, 0, 200, 1, 2, 3, 4]);
    assert.throws(() => new FrameDecoder().push(longHeader), FrameError);
    const cutBinary = Buffer.from([0, 0, 0, 7, 1, 0, 0, 3, 0, 105, 0]);
    assert.throws(() => new FrameDecoder().push(cutBinary), FrameError);
  });

  it("carry properties and batches as RocketMQ's MessageDecoder does", () => {
    const props = { TAGS: "A", KEYS: "k1 k2", UNIQ_KEY: "X" };
    assert.deepEqual({ ...parseProperties(propertiesString(props)) }, props);
    const entry = (body: string, p: string) => {
      const b = Buffer.from(body);
      const pb = Buffer.from(p);
      const out = Buffer.alloc(20 + b.byteLength + 2 + pb.byteLength);
      out.writeInt32BE(out.byteLength, 0);
      out.writeInt32BE(5, 12);
      out.writeInt32BE(b.byteLength, 16);
      b.copy(out, 20);
      out.writeUInt16BE(pb.byteLength, 20 + b.byteLength);
      pb.copy(out, 22 + b.byteLength);
      return out;
    };
    const batch = decodeBatch(Buffer.concat([entry("one", "a\u0001b"), entry("two", "")]));
    assert.deepEqual(
      batch.map((e) => [Buffer.from(e.body).toString(), e.flag, { ...e.properties }]),
      [
        ["one", 5, { a: "b" }],
        ["two", 5, {}],
      ],
    );
    assert.throws(() => decodeBatch(entry("x", "").subarray(0, 10)));
  });
});

for (const mode of ["local", "aws"] as const) {
  describe(`the remoting door (${mode})`, () => {
    const ctx = useTestServer(mode);
    const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
    const open = () => RawRemoting.open(ctx.server.server.port);

    it("answers the name server's requests in both serializations and leaves HTTP on the same port", async () => {
      const topic = uniqueName("RawRoute");
      await createTopic(api(), topic, 2);
      const c = await open();
      try {
        for (const binary of [false, true]) {
          const route = await c.request({ code: RequestCode.GET_ROUTEINFO_BY_TOPIC, extFields: { topic }, binary });
          assert.equal(route.code, ResponseCode.SUCCESS);
          assert.equal(route.serializeType, binary ? SERIALIZE_ROCKETMQ : SERIALIZE_JSON);
          const body = json(route) as { brokerDatas: { brokerName: string; brokerAddrs: Record<string, string> }[] };
          const a = body.brokerDatas.find((b) => b.brokerName === "broker-a");
          assert.equal(a?.brokerAddrs["0"], `127.0.0.1:${ctx.server.server.port}`);
          const b = body.brokerDatas.find((x) => x.brokerName === "broker-b");
          assert.equal(b?.brokerAddrs["0"], `127.0.0.1:${ctx.server.server.remoting?.portOf("broker-b")}`);
        }
        const missing = await c.request({ code: RequestCode.GET_ROUTEINFO_BY_TOPIC, extFields: { topic: "NoSuchT" } });
        assert.equal(missing.code, ResponseCode.TOPIC_NOT_EXIST);
        const unknown = await c.request({ code: 9999 });
        assert.equal(unknown.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
        assert.match(unknown.remark ?? "", /9999/);
        const noHeader = await c.request({ code: RequestCode.PULL_MESSAGE });
        assert.equal(noHeader.code, ResponseCode.MESSAGE_ILLEGAL);
        assert.equal((await api().clusterInfo()).clusterAddrTable.DefaultCluster?.length, 2, "HTTP still answers");
      } finally {
        c.close();
      }
    });

    it("lists a connection under the client id of its newest heartbeat only, and under none once it closes", async () => {
      const door = ctx.server.server.remoting;
      assert.ok(door !== undefined);
      const group = uniqueName("RenamingProducers");
      const c = await open();
      const ids = Array.from({ length: 5 }, (_, i) => uniqueName(`renamed-${i}`));
      for (const clientID of ids) {
        const body = new TextEncoder().encode(JSON.stringify({ clientID, producerDataSet: [{ groupName: group }] }));
        const answer = await c.request({ code: RequestCode.HEART_BEAT, body });
        assert.equal(answer.code, ResponseCode.SUCCESS, answer.remark);
      }
      const newest = ids.at(-1) as string;
      assert.deepEqual(
        ids.filter((id) => door.scopeOf(id) !== undefined),
        [newest],
        "the ids it dropped name no connection",
      );
      c.close();
      await c.closed;
      await waitUntil(() => door.scopeOf(newest) === undefined, "the closed connection is forgotten");
    });

    it("closes a connection on a hostile frame, answering nothing and writing nothing", async () => {
      const topic = uniqueName("Hostile");
      await createTopic(api(), topic, 1);
      const big = Buffer.alloc(8);
      big.writeUInt32BE(0x00100000, 0); // 1 MiB: a length that is accepted and never completed
      const hostile: Buffer[] = [
        Buffer.from([0, 0x90, 0, 0, 0, 0, 0, 0]), // 9 MiB announced, over the 8 MiB a request may have
        Buffer.from("\u0000\u0000\u0000\u0007\u0000\u0000\u0000\u0003{x}", "latin1"), // a header that is not JSON
        Buffer.from([0, 0, 0, 8, 0, 0, 0, 200, 1, 2, 3, 4]), // a header longer than its frame
        Buffer.from([0, 0, 0, 12, 9, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]), // serialize type 9
      ];
      // 2 GiB announced after a well-formed frame: that one is answered, then the connection closes.
      const after = await open();
      const answered = await after.request({ code: 9999 });
      assert.equal(answered.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
      const received = after.received;
      after.write(Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
      await after.closed;
      assert.equal(after.received, received, "nothing after the well-formed frame's answer");
      for (const bytes of hostile) {
        const c = await open();
        // A send hidden after the hostile frame is never read as one.
        c.write(Buffer.concat([bytes, Buffer.from("SEND")]));
        await c.closed;
        assert.equal(c.received, 0, `nothing answered to ${bytes.subarray(0, 8).toString("hex")}`);
      }
      // Truncated: the connection waits for the rest; closing it leaves nothing behind.
      const cut = await open();
      cut.write(encodeFrame(command({ code: RequestCode.SEND_MESSAGE_V2 })).subarray(0, 20));
      cut.write(big);
      cut.close();
      await cut.closed;
      const status = await api().topicStatus(topic);
      assert.deepEqual(
        status.map((q) => q.maxOffset),
        [0, 0],
        "nothing was written",
      );
    });

    it("answers requests written together each by its opaque; a pull's offset is read back, an unmoved update not written", async () => {
      const topic = uniqueName("Together");
      await createTopic(api(), topic, 1, ["broker-a"]);
      const group = uniqueName("TogetherG");
      const c = await open();
      try {
        // SEND_MESSAGE_V2's one-letter names; the sends reach the door in one chunk and are answered in one turn.
        const send = (i: number) =>
          c.request({
            code: RequestCode.SEND_MESSAGE_V2,
            extFields: {
              a: `${group}P`,
              b: topic,
              e: "0",
              f: "0",
              g: String(Date.now()),
              h: "0",
              i: `TAGS\u0001t${i}`,
            },
            body: new TextEncoder().encode(`m${i}`),
          });
        c.socket.cork();
        const sends = Array.from({ length: 16 }, (_, i) => send(i));
        c.socket.uncork();
        const answers = await Promise.all(sends);
        assert.deepEqual(
          answers.map((a) => [a.code, a.extFields.queueOffset]),
          answers.map((_, i) => [ResponseCode.SUCCESS, String(i)]),
        );
        const pull = await c.request({
          code: RequestCode.PULL_MESSAGE,
          extFields: {
            consumerGroup: group,
            topic,
            queueId: "0",
            queueOffset: "0",
            maxMsgNums: "32",
            sysFlag: String(0x1 | 0x4),
            commitOffset: "5",
            subscription: "*",
            subVersion: "0",
            expressionType: "TAG",
          },
        });
        assert.equal(pull.code, ResponseCode.SUCCESS);
        assert.equal(pull.extFields.nextBeginOffset, "16");
        const committed = await c.request({
          code: RequestCode.QUERY_CONSUMER_OFFSET,
          extFields: { consumerGroup: group, topic, queueId: "0" },
        });
        assert.equal(committed.extFields.offset, "5", "the offset the pull carried");
        // The client's periodic UPDATE_CONSUMER_OFFSET of the offset stored already writes nothing (the record's
        // time stays); a moved one is written.
        const stamp = async () => (await api().queueOwners(group, topic))[0]?.updatedAt;
        const update = (offset: string) =>
          c.request({
            code: RequestCode.UPDATE_CONSUMER_OFFSET,
            extFields: { consumerGroup: group, topic, queueId: "0", commitOffset: offset },
          });
        const stored = await stamp();
        assert.ok(stored !== undefined, "the carried offset's record is there");
        const later = Number(stored) + 2;
        await waitUntil(() => Date.now() > later, "the clock past the stored record's time");
        assert.equal((await update("5")).code, ResponseCode.SUCCESS);
        assert.equal(await stamp(), stored, "not written again");
        assert.equal((await update("6")).code, ResponseCode.SUCCESS);
        assert.ok(Number(await stamp()) > Number(stored), "the moved offset written");
      } finally {
        c.close();
      }
    });

    it("a pull on an empty queue waits until an append wakes it; a closed connection ends its wait", async () => {
      const topic = uniqueName("LongPoll");
      await createTopic(api(), topic, 1, ["broker-a"]);
      const door = ctx.server.server.remoting;
      assert.ok(door);
      const pull = {
        code: RequestCode.PULL_MESSAGE,
        extFields: {
          consumerGroup: uniqueName("LongPollG"),
          topic,
          queueId: "0",
          queueOffset: "0",
          maxMsgNums: "32",
          sysFlag: String(0x2 | 0x4),
          commitOffset: "0",
          suspendTimeoutMillis: "60000",
          subscription: "*",
          subVersion: "0",
          expressionType: "TAG",
        },
      };
      const c = await open();
      try {
        const before = { ...door.waits.wakeCounts };
        const waiting = c.request(pull);
        await waitUntil(() => door.waits.waiting === 1, "the pull waits");
        await api().send({
          topic,
          brokerName: "broker-a",
          queueId: 0,
          messages: [{ body: new TextEncoder().encode("wake") }],
        });
        const answer = await waiting;
        assert.equal(answer.code, ResponseCode.SUCCESS);
        assert.equal(answer.extFields.nextBeginOffset, "1");
        assert.equal(door.waits.wakeCounts.append, before.append + 1, "woken by the append");
        const closing = c.request({ ...pull, extFields: { ...pull.extFields, queueOffset: "1" } });
        void closing;
        await waitUntil(() => door.waits.waiting === 1, "the second pull waits");
        c.close();
        await waitUntil(() => door.waits.waiting === 0, "the closed connection's pull stops waiting");
        assert.equal(door.waits.wakeCounts.closed, before.closed + 1);
      } finally {
        c.close();
      }
    });
  });
}
