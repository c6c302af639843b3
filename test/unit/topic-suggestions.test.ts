/** @module "Did you mean": the closest existing topic to a missing name (lib/broker/names/topic-suggestions.ts). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { closestTopic, TopicSuggestions } from "../../lib/broker/names/index.js";
import { editDistance } from "../../lib/broker/names/topic-suggestions.js";

describe("topic suggestions", () => {
  const topics = ["TopicTest", "OrderTopic", "payments.v2", "A"];

  it("names the topic that differs by letter case, or by a few edits for the name's length", () => {
    assert.equal(closestTopic("topictest", topics), "TopicTest");
    assert.equal(closestTopic("TopicTset", topics), "TopicTest");
    assert.equal(closestTopic("OrderTopc", topics), "OrderTopic");
    assert.equal(closestTopic("payments.v3", topics), "payments.v2");
  });

  it("names nothing when no topic is that close, or the name exists", () => {
    assert.equal(closestTopic("Inventory", topics), undefined);
    assert.equal(closestTopic("B", ["A"]), "A"); // one edit on a one-letter name is allowed
    assert.equal(closestTopic("BC", ["A"]), undefined);
    assert.equal(closestTopic("TopicTest", ["TopicTest"]), undefined);
    assert.equal(closestTopic("x".repeat(300), ["x".repeat(299)]), undefined, "over-long names are not compared");
  });

  it("edit distance gives up past its limit", () => {
    assert.equal(editDistance("kitten", "sitting", 5), 3);
    assert.equal(editDistance("kitten", "sitting", 2), 3);
    assert.equal(editDistance("a", "abcdef", 2), 3);
  });

  it("reads the topic list at most once per period", async () => {
    let reads = 0;
    let clock = 0;
    const s = new TopicSuggestions(
      async () => {
        reads++;
        return topics;
      },
      () => clock,
    );
    assert.equal(await s.closestTo("TopicTset"), "TopicTest");
    assert.equal(await s.closestTo("OrderTopc"), "OrderTopic");
    assert.equal(reads, 1);
    clock += 10_000;
    await s.closestTo("x");
    assert.equal(reads, 2);
  });

  it("a list that cannot be read suggests nothing", async () => {
    const s = new TopicSuggestions(async () => {
      throw new Error("throttled");
    });
    assert.equal(await s.closestTo("TopicTset"), undefined);
  });
});
