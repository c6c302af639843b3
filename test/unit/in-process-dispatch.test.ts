/**
 * @module The append hint of `nimbus dev`'s in-process dispatch on the embedded store: a burst of appends reads the
 * subscription list once (not once per append), wakes the appended topic's subscriptions only, sees a subscription
 * saved in this process at the next append, and one written by another process once the reuse window has passed.
 * Asserted on the store's reads and the wakes asked for, on a clock moved by hand, never on elapsed time.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Broker } from "../../lib/broker/broker.js";
import {
  InProcessDispatch,
  SUBSCRIPTION_LIST_REUSE_MS,
  type Subscription,
  type SubscriptionDispatcher,
} from "../../lib/broker/subscriptions/index.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { SubscriptionDefinitionSchema } from "../../lib/protocol/index.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { LOCAL_WEBHOOKS, TEST_SEAL_KEY } from "../support/stage-keys.js";

const HINTED = "HintedTopic";
const OTHER = "OtherTopic";
const target = { type: "http", url: "https://example.com/hook", secret: "0123456789abcdef" };

/** Records the wakes asked for; delivers nothing (delivery itself is tested in test/e2e/subscription-*.test.ts). */
function recordingDispatcher(): { dispatcher: SubscriptionDispatcher; woken: string[] } {
  const woken: string[] = [];
  const totals = { delivered: 0, acked: 0, retried: 0, deadLettered: 0 };
  const recording = {
    wake: async (s: Subscription) => {
      woken.push(s.group);
      return totals;
    },
    totals,
    traceCounts: { sent: 0, dropped: 0, failed: 0 },
    close: async () => {},
  };
  return { dispatcher: recording as unknown as SubscriptionDispatcher, woken };
}

describe("in-process dispatch: the append hint's subscription list", () => {
  let dataDir: string;
  let storage: Storage;
  let broker: Broker;

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "nimbus-hint-"));
    storage = createLocalStorage({ dataDir });
    broker = createBroker(storage, LOCAL_WEBHOOKS, {
      apiUrl: "http://127.0.0.1:1",
      newMessageId,
      sealKey: TEST_SEAL_KEY,
    });
    await broker.registerBrokers();
    for (const topic of [HINTED, OTHER])
      await broker.topics.upsert(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
  });

  after(async () => {
    await broker.timers.settled();
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const save = (group: string, topic: string) =>
    broker.subscriptions.put(group, SubscriptionDefinitionSchema.parse({ topic, target }));

  /** A dispatch on `now`, and one append hint of `topic` run to its end: the groups it woke, sorted. */
  function dispatchOn(now: () => number): { dispatch: InProcessDispatch; hint: (topic: string) => Promise<string[]> } {
    const { dispatcher, woken } = recordingDispatcher();
    const dispatch = new InProcessDispatch({ store: broker.subscriptions, dispatcher, now });
    const hint = async (topic: string) => {
      woken.length = 0;
      dispatch.topicAppended(topic);
      await dispatch.settled();
      return [...woken].sort();
    };
    return { dispatch, hint };
  }

  /** A clock that stands still: the reuse window never ends by itself, however slow this machine is. */
  const stillClock = () => 1_000_000;

  it("reads the list once for a burst of appends and wakes only the appended topic's subscriptions", async () => {
    await save("HintSub", HINTED);
    await save("OtherSub", OTHER);
    const { dispatch, hint } = dispatchOn(stillClock);
    try {
      const before = storage.counter.snapshot().tableReads;
      const woken: string[] = [];
      for (let i = 0; i < 50; i++) woken.push(...(await hint(HINTED)));
      assert.deepEqual(woken, Array(50).fill("HintSub"));
      // One read of the list, then one get per wake (the subscription's current definition).
      assert.equal(storage.counter.snapshot().tableReads - before, 1 + 50);
    } finally {
      await dispatch.close();
    }
  });

  it("sees a subscription saved in this process at the next append", async () => {
    const { dispatch, hint } = dispatchOn(stillClock);
    try {
      await hint(HINTED);
      const { subscription } = await save("LateSub", HINTED);
      dispatch.saved(subscription);
      await dispatch.settled();
      assert.deepEqual(await hint(HINTED), ["HintSub", "LateSub"]);
    } finally {
      await dispatch.close();
    }
  });

  it("sees one written by another process once the reuse window has passed", async () => {
    let clock = 1_000_000;
    const { dispatch, hint } = dispatchOn(() => clock);
    try {
      assert.deepEqual(await hint(OTHER), ["OtherSub"]);
      // Written without telling this dispatch, as a second process on the same store would.
      await save("ElsewhereSub", OTHER);
      assert.deepEqual(await hint(OTHER), ["OtherSub"], "within the window the list read before is reused");
      clock += SUBSCRIPTION_LIST_REUSE_MS - 1;
      assert.deepEqual(await hint(OTHER), ["OtherSub"], "still within the window");
      clock += 1;
      assert.deepEqual(await hint(OTHER), ["ElsewhereSub", "OtherSub"]);
    } finally {
      await dispatch.close();
    }
  });
});
