/**
 * Unit tests of the rebalance: readable queues of a route, the allocation every consumer computes the
 * same way (sorted queues, sorted ids), and `RebalanceImpl` rounds against a scripted API (queues that
 * leave are stopped before new ones start, a failed start is retried, a deleted topic drops its queues).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllocateMessageQueueAveragely } from "../../lib/client/allocate/allocate-averagely.js";
import type { StartOffset } from "../../lib/client/consumer/consume-from-where.js";
import { allocateQueues, RebalanceImpl, readableQueues, sortConsumerIds } from "../../lib/client/consumer/rebalance.js";
import type { NimbusApi } from "../../lib/client/transport/api-client.js";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import { MessageQueue } from "../../lib/core/message-queue.js";
import type { QueueData, TopicRouteData } from "../../lib/protocol/index.js";

const qd = (brokerName: string, readQueueNums: number, perm = 6, writeQueueNums = readQueueNums): QueueData => ({
  brokerName,
  readQueueNums,
  writeQueueNums,
  perm,
  topicSysFlag: 0,
});
const route = (...queueDatas: QueueData[]): TopicRouteData => ({ queueDatas, brokerDatas: [] });
const names = (queues: readonly MessageQueue[]) => queues.map((q) => `${q.brokerName}:${q.queueId}`);
const AVG = new AllocateMessageQueueAveragely();

describe("readableQueues", () => {
  it("lists ids 0..readQueueNums-1 of every readable broker, sorted by broker then id", () => {
    const queues = readableQueues("T", route(qd("broker-b", 2), qd("broker-a", 3, 6, 1)));
    assert.deepEqual(names(queues), ["broker-a:0", "broker-a:1", "broker-a:2", "broker-b:0", "broker-b:1"]);
    assert.ok(queues.every((q) => q.topic === "T"));
  });

  it("leaves out brokers whose QueueData cannot be read (write-only, none)", () => {
    const queues = readableQueues("T", route(qd("broker-a", 4, 2), qd("broker-b", 2, 4), qd("broker-c", 2, 0)));
    assert.deepEqual(names(queues), ["broker-b:0", "broker-b:1"]);
  });

  it("sorts broker names as Java does (code units, not locale)", () => {
    assert.deepEqual(names(readableQueues("T", route(qd("b", 1), qd("B", 1), qd("a", 1)))), ["B:0", "a:0", "b:0"]);
  });
});

describe("allocateQueues", () => {
  const eight = readableQueues("T", route(qd("broker-a", 4), qd("broker-b", 4)));
  const ids = ["c-3", "c-1", "c-2"];

  it("gives 3 consumers of 8 queues 3, 3 and 2 disjoint queues covering all, whatever the input order", () => {
    const shuffled = [...eight].reverse();
    const shares = ids.map((id) => allocateQueues(AVG, "g", id, shuffled, ids));
    assert.deepEqual(
      shares.map((s) => s.length),
      [2, 3, 3],
    );
    const byId = new Map(ids.map((id, i) => [id, names(shares[i] ?? [])]));
    assert.deepEqual(byId.get("c-1"), ["broker-a:0", "broker-a:1", "broker-a:2"]);
    assert.deepEqual(byId.get("c-2"), ["broker-a:3", "broker-b:0", "broker-b:1"]);
    assert.deepEqual(byId.get("c-3"), ["broker-b:2", "broker-b:3"]);
    const all = shares.flat().map((q) => q.key());
    assert.equal(new Set(all).size, 8);
  });

  it("leaves the sixth of 6 consumers on 5 queues idle", () => {
    const five = readableQueues("T", route(qd("broker-a", 5)));
    const six = ["c1", "c2", "c3", "c4", "c5", "c6"];
    const shares = six.map((id) => allocateQueues(AVG, "g", id, five, six).length);
    assert.deepEqual(shares, [1, 1, 1, 1, 1, 0]);
  });

  it("gives nothing to a consumer not (yet) in the list, and nothing when there are no queues", () => {
    assert.deepEqual(allocateQueues(AVG, "g", "c-9", eight, ids), []);
    assert.deepEqual(allocateQueues(AVG, "g", "c-1", [], ids), []);
    assert.deepEqual(allocateQueues(AVG, "g", "c-1", eight, []), []);
  });

  it("sorts and de-duplicates consumer ids in string order", () => {
    assert.deepEqual(sortConsumerIds(["b", "a", "B", "a"]), ["B", "a", "b"]);
  });
});

/** A scripted API: the route and consumer list the test sets, and failures on demand. */
function fakeApi(state: { routes: Map<string, TopicRouteData>; ids: string[] }): NimbusApi {
  const api = {
    async topicRoute(topic: string) {
      const r = state.routes.get(topic);
      if (r === undefined) throw new NimbusError(ErrorCode.TOPIC_NOT_EXIST, `no route of ${topic}`);
      return r;
    },
    async consumerIds() {
      return state.ids;
    },
  };
  return api as unknown as NimbusApi;
}

function harness(clientId: string, state: { routes: Map<string, TopicRouteData>; ids: string[] }) {
  const events: string[] = [];
  const failing = new Set<string>();
  const rebalance = new RebalanceImpl({
    api: fakeApi(state),
    consumerGroup: "g",
    clientId,
    messageModel: "CLUSTERING",
    strategy: AVG,
    topics: () => [...state.routes.keys(), "Gone"],
    hooks: {
      awaitTurn: async () => ({ kind: "clean" }),
      claim: async () => true,
      async computePullFromWhere(mq: MessageQueue): Promise<StartOffset> {
        if (failing.has(mq.key())) throw new Error("offsets unavailable");
        return { offset: mq.queueId * 10, fromStore: true };
      },
      startQueue: (mq, start) => events.push(`start ${mq.brokerName}:${mq.queueId}@${start.offset}`),
      stopQueue: async (mq) => {
        events.push(`stop ${mq.brokerName}:${mq.queueId}`);
      },
    },
    onMembershipLost: () => events.push("membership lost"),
    onError: () => undefined,
  });
  // A round, then the starts it began (they run apart from the round).
  const round = async () => {
    await rebalance.doRebalance();
    await rebalance.whenStarted();
  };
  return { rebalance, round, events, failing };
}

describe("RebalanceImpl", () => {
  it("takes its share, gives queues up when a consumer joins, takes them back when it leaves", async () => {
    const state = { routes: new Map([["T", route(qd("broker-a", 2), qd("broker-b", 2))]]), ids: ["c1"] };
    const { rebalance, round, events } = harness("c1", state);
    await round();
    assert.deepEqual(names(rebalance.assignedQueues()), ["broker-a:0", "broker-a:1", "broker-b:0", "broker-b:1"]);
    assert.equal(rebalance.membershipChanged(["c1"]), false);

    state.ids = ["c2", "c1"];
    assert.equal(rebalance.membershipChanged(state.ids), true);
    events.length = 0;
    await round();
    assert.deepEqual(names(rebalance.assignedQueues()), ["broker-a:0", "broker-a:1"]);
    assert.deepEqual(events.sort(), ["stop broker-b:0", "stop broker-b:1"]);

    state.ids = ["c1"];
    events.length = 0;
    await round();
    assert.deepEqual(events, ["start broker-b:0@0", "start broker-b:1@10"]);
  });

  it("retries a queue whose start offset could not be read, and reports the round unbalanced", async () => {
    const state = { routes: new Map([["T", route(qd("broker-a", 2))]]), ids: ["c1"] };
    const { rebalance, round, failing } = harness("c1", state);
    failing.add(new MessageQueue("T", "broker-a", 1).key());
    await round();
    assert.equal(rebalance.balanced, false);
    assert.deepEqual(names(rebalance.assignedQueues()), ["broker-a:0"]);
    failing.clear();
    await round();
    assert.equal(rebalance.balanced, true);
    assert.deepEqual(names(rebalance.assignedQueues()), ["broker-a:0", "broker-a:1"]);
  });

  it("drops the queues of a topic that no longer exists, and keeps them while the id list is empty", async () => {
    const state = { routes: new Map([["T", route(qd("broker-a", 1))]]), ids: ["c1"] };
    const { rebalance, round } = harness("c1", state);
    await round();
    state.ids = [];
    await round();
    assert.deepEqual(names(rebalance.assignedQueues()), ["broker-a:0"]);
    state.ids = ["c1"];
    state.routes.clear();
    await round();
    assert.deepEqual(rebalance.assignedQueues(), []);
  });

  it("releases every queue when its own id is missing from the group's list, and heartbeats", async () => {
    const state = { routes: new Map([["T", route(qd("broker-a", 2))]]), ids: ["c1", "c2"] };
    const { rebalance, round, events } = harness("c1", state);
    await round();
    assert.deepEqual(names(rebalance.assignedQueues()), ["broker-a:0"]);
    state.ids = ["c2"];
    events.length = 0;
    await round();
    assert.deepEqual(rebalance.assignedQueues(), []);
    assert.deepEqual(events, ["membership lost", "stop broker-a:0"]);
    assert.equal(rebalance.balanced, false, "retried soon, as the heartbeat makes it a member again");
  });

  it("a queue waiting for its turn is abandoned, not stopped, when it goes elsewhere meanwhile", async () => {
    const state = { routes: new Map([["T", route(qd("broker-a", 1))]]), ids: ["c1"] };
    const events: string[] = [];
    const rebalance = new RebalanceImpl({
      api: fakeApi(state),
      consumerGroup: "g",
      clientId: "c1",
      messageModel: "CLUSTERING",
      strategy: AVG,
      topics: () => ["T"],
      hooks: {
        // The previous owner never releases: the wait ends only by abort.
        awaitTurn: (_mq, signal) =>
          new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
        computePullFromWhere: async () => ({ offset: 0, fromStore: true }),
        claim: async () => true,
        startQueue: (mq) => events.push(`start ${mq.queueId}`),
        stopQueue: async (mq) => {
          events.push(`stop ${mq.queueId}`);
        },
      },
      onMembershipLost: () => undefined,
      onError: (err, what) => events.push(`error ${what}: ${String(err)}`),
    });
    await rebalance.doRebalance();
    assert.equal(rebalance.waiting, 1);
    assert.deepEqual(names(rebalance.assignedQueues()), ["broker-a:0"]);
    state.ids = ["c0", "c1"];
    await rebalance.doRebalance();
    assert.equal(rebalance.waiting, 0);
    assert.deepEqual(rebalance.assignedQueues(), []);
    assert.deepEqual(events, [], "never started, so neither stopped nor released, and no error");
  });

  it("runs overlapping calls as one more round, never two at once", async () => {
    const state = { routes: new Map([["T", route(qd("broker-a", 1))]]), ids: ["c1"] };
    const { rebalance } = harness("c1", state);
    await Promise.all([rebalance.doRebalance(), rebalance.doRebalance(), rebalance.doRebalance()]);
    assert.equal(rebalance.rounds, 2);
  });
});
