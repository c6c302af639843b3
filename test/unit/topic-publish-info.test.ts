import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { topicRouteData2TopicPublishInfo } from "../../lib/client/producer/topic-publish-info.js";
import type { BrokerData, QueueData, TopicRouteData } from "../../lib/protocol/index.js";

const T = "TopicTest";

function qd(brokerName: string, writeQueueNums: number, perm = 6): QueueData {
  return { brokerName, readQueueNums: writeQueueNums, writeQueueNums, perm, topicSysFlag: 0 };
}

function bd(brokerName: string, brokerAddrs: Record<string, string> = { "0": `http://${brokerName}` }): BrokerData {
  return { cluster: "DefaultCluster", brokerName, brokerAddrs };
}

function route(queueDatas: QueueData[], brokerDatas: BrokerData[]): TopicRouteData {
  return { queueDatas, brokerDatas };
}

const names = (info: { messageQueueList: readonly { brokerName: string; queueId: number }[] }) =>
  info.messageQueueList.map((mq) => `${mq.brokerName.slice(-1)}${mq.queueId}`);

/** 2 queues on broker-a, 3 on broker-b, listed b first to show the sort. */
const twoBrokers = route([qd("broker-b", 3), qd("broker-a", 2)], [bd("broker-b"), bd("broker-a")]);

describe("topicRouteData2TopicPublishInfo", () => {
  it("lists 2 queues on broker-a and 3 on broker-b as a0 a1 b0 b1 b2", () => {
    const info = topicRouteData2TopicPublishInfo(T, twoBrokers);
    assert.deepEqual(names(info), ["a0", "a1", "b0", "b1", "b2"]);
    assert.ok(info.messageQueueList.every((mq) => mq.topic === T));
    assert.equal(info.ok(), true);
  });

  it("skips a broker whose perm is not writable", () => {
    const info = topicRouteData2TopicPublishInfo(
      T,
      route([qd("broker-a", 2, 4), qd("broker-b", 3, 6)], [bd("broker-a"), bd("broker-b")]),
    );
    assert.deepEqual(names(info), ["b0", "b1", "b2"]);
  });

  it("keeps a write-only broker (perm 2) and skips one with no permission (perm 0)", () => {
    const info = topicRouteData2TopicPublishInfo(
      T,
      route([qd("broker-a", 1, 2), qd("broker-b", 1, 0)], [bd("broker-a"), bd("broker-b")]),
    );
    assert.deepEqual(names(info), ["a0"]);
  });

  it("skips a broker without a master address, and a broker missing from brokerDatas", () => {
    const info = topicRouteData2TopicPublishInfo(
      T,
      route(
        [qd("broker-a", 2), qd("broker-b", 3), qd("broker-c", 1)],
        [bd("broker-a", { "1": "http://slave-a" }), bd("broker-b")],
      ),
    );
    assert.deepEqual(names(info), ["b0", "b1", "b2"]);
  });

  it("gives each broker's master address, not a slave's", () => {
    const info = topicRouteData2TopicPublishInfo(
      T,
      route(
        [qd("broker-a", 1), qd("broker-b", 1)],
        [bd("broker-a", { "0": "http://m", "1": "http://s" }), bd("broker-b", { "1": "http://s" })],
      ),
    );
    assert.equal(info.brokerAddr("broker-a"), "http://m");
    assert.equal(info.brokerAddr("broker-b"), undefined);
    assert.equal(info.brokerAddr("broker-z"), undefined);
  });

  it("is not ok without writable queues, and selects nothing", () => {
    const info = topicRouteData2TopicPublishInfo(
      T,
      route([qd("broker-a", 0), qd("broker-b", 4, 4)], [bd("broker-a"), bd("broker-b")]),
    );
    assert.equal(info.ok(), false);
    assert.equal(info.selectOneMessageQueue(), undefined);
    assert.equal(info.selectOneMessageQueue("broker-a"), undefined);
  });
});

describe("TopicPublishInfo.selectOneMessageQueue", () => {
  it("round-robins over every queue in order", () => {
    const info = topicRouteData2TopicPublishInfo(T, twoBrokers, { startIndex: -1 });
    const picked = Array.from({ length: 7 }, () => info.selectOneMessageQueue());
    assert.deepEqual(
      picked.map((mq) => `${mq?.brokerName.slice(-1)}${mq?.queueId}`),
      ["a0", "a1", "b0", "b1", "b2", "a0", "a1"],
    );
  });

  it("from a random start, n picks still cover all n queues", () => {
    for (let run = 0; run < 20; run++) {
      const info = topicRouteData2TopicPublishInfo(T, twoBrokers);
      const seen = new Set(Array.from({ length: 5 }, () => info.selectOneMessageQueue()?.key()));
      assert.equal(seen.size, 5);
    }
  });

  it("stays non-negative when the counter wraps past 2^31-1", () => {
    const info = topicRouteData2TopicPublishInfo(T, twoBrokers, { startIndex: 0x7fffffff - 2 });
    for (let i = 0; i < 10; i++) assert.ok(info.selectOneMessageQueue() !== undefined);
  });

  it("after a failure on broker-a, picks a queue of broker-b even when broker-a is next", () => {
    const info = topicRouteData2TopicPublishInfo(T, twoBrokers, { startIndex: -1 });
    // The next queue round robin would be a0.
    const retry = info.selectOneMessageQueue("broker-a");
    assert.equal(retry?.brokerName, "broker-b");
    for (let i = 0; i < 20; i++) assert.equal(info.selectOneMessageQueue("broker-a")?.brokerName, "broker-b");
    for (let i = 0; i < 20; i++) assert.equal(info.selectOneMessageQueue("broker-b")?.brokerName, "broker-a");
  });

  it("falls back to the failed broker's queues when it is the only writable broker", () => {
    const info = topicRouteData2TopicPublishInfo(
      T,
      route([qd("broker-a", 2), qd("broker-b", 3, 4)], [bd("broker-a"), bd("broker-b")]),
      { startIndex: -1 },
    );
    const picks = Array.from({ length: 4 }, () => info.selectOneMessageQueue("broker-a"));
    assert.ok(picks.every((mq) => mq?.brokerName === "broker-a"));
  });

  it("a broker name that is not in the route changes nothing but the counter", () => {
    const info = topicRouteData2TopicPublishInfo(T, twoBrokers, { startIndex: -1 });
    assert.equal(info.selectOneMessageQueue("broker-z")?.key(), `${T}#broker-a#0`);
  });
});
