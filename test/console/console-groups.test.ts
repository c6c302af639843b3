/**
 * The console's consumer groups in a real browser (headless Chromium) against a fresh local broker: the groups
 * page lists every group from `GET /groups` (members, model, total lag, subscription group), and a group's lag
 * chart shows the broker's samples as soon as the page opens, in a browser that never opened it before (empty
 * localStorage). The earlier samples are written as the sampling job would have at earlier minutes (the broker's
 * LagSamples on the server's own store, on a clock set back), the latest by the job itself. Screenshots as
 * console.test.ts (docs/console/ with UPDATE_CONSOLE_SCREENSHOTS=1). Every wait is for a state, bounded.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LagSamples } from "../../lib/broker/groups/index.js";
import { OFFSETS_TABLE } from "../../lib/broker/store/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { fakeClock, uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { CONSOLE_SKIP as skip, useConsolePage, WAIT as wait } from "./browser.js";

describe("the console's consumer groups in Chromium", { skip }, () => {
  const ctx = useTestServer("local");
  const topic = uniqueName("GroupsTopic");
  const lagging = uniqueName("laggingGroup");
  const idle = uniqueName("disabledGroup");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
  const session = useConsolePage(() => ctx.server.url);

  it("setup: a group 3 behind with a live member, a disabled one, and the broker's lag samples of 3 minutes", async () => {
    const a = api();
    await a.updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    const messages = ["1", "2", "3", "4"].map((b) => ({ body: new TextEncoder().encode(b) }));
    await a.send({ topic, brokerName: "broker-a", queueId: 0, messages });
    await a.commitOffsets(lagging, topic, [{ brokerName: "broker-a", queueId: 0, offset: 1 }]);
    await a.heartbeat({
      clientId: "console-member",
      consumerDataSet: [{ groupName: lagging, subscriptionDataSet: [{ topic, subString: "*" }] }],
    });
    await a.updateSubGroup(idle, { consumeEnable: false, retryMaxTimes: 2 });
    // Two earlier runs of the sampling job (lag 1, then 2), then this minute's run (lag 3).
    const past = fakeClock(Date.now() - 3 * 60_000);
    const earlier = new LagSamples(ctx.server.server.storage.table(OFFSETS_TABLE), {}, past);
    await earlier.record(lagging, 1);
    past.advance(60_000);
    await earlier.record(lagging, 2);
    const report = await ctx.server.server.context.broker.sampleLag();
    assert.ok(report.groups >= 2);
    assert.deepEqual(
      (await a.lagHistory(lagging)).samples.map((s) => s.lag),
      [1, 2, 3],
    );
  });

  it("groups page: every group with members, model, total lag, topics and its subscription group", async () => {
    await session.page.goto(session.consoleUrl("#/groups"));
    const rows = session.page.getByTestId("group-row");
    await rows.nth(1).waitFor(wait);
    const texts = await rows.allInnerTexts();
    const row = (g: string) => texts.find((t) => t.startsWith(`${g}\t`))?.split("\t");
    assert.deepEqual(row(lagging), [lagging, "1", "CLUSTERING", "3", topic, "enabled", "16"]);
    assert.deepEqual(row(idle), [idle, "0", "OFFLINE", "0", "", "disabled", "2"]);
    await session.shot("groups");
  });

  it("group page: the lag chart has the broker's samples at once, in a browser that never sampled it", async () => {
    assert.deepEqual(await session.page.evaluate("Object.keys(localStorage).filter((k) => k.includes('lag:'))"), []);
    await session.page.getByRole("link", { name: lagging }).click();
    await session.page.getByTestId("broker-samples").and(session.page.locator('[data-count="3"]')).waitFor(wait);
    // The chart renders with the broker's samples (no string evaluation: the console's CSP forbids eval).
    const drawn = Number(await session.page.getByTestId("lag-chart").getAttribute("data-samples"));
    assert.ok(drawn >= 3, `the chart has the broker's 3 samples (${drawn})`);
    assert.match(await session.page.locator("figure.chart figcaption").innerText(), /latest lag 3/);
    assert.equal(await session.page.getByTestId("consume-enable").innerText(), "enabled");
    await session.shot("group-history");
  });
});

if (skip) describe("the console's consumer groups in Chromium", () => it(`skipped: ${skip}`, { skip }, () => {}));
