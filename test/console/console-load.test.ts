/**
 * The topic page's load measure in a real browser (headless Chromium) against a fresh local broker: opening the
 * page measures nothing (`?load=true` costs reads), the "Measure load" button asks once, and a queue near its
 * partition key's write limit shows the warning with what helps, a quiet queue the all-clear and no warning.
 * The busy queue is written on the server's own store by a queue log whose clock runs ten minutes ahead of the
 * server's, so the measure takes its shortest window (50 ms) whatever the machine's speed: 32 sampled appends of
 * 1 KiB (2 write units each) in 50 ms, 128 % of a key's 1,000 units/s. Skipped only when Chromium is missing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { QueueLog } from "../../lib/broker/queue-log/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { record } from "../contract/queue-log-helpers.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { CONSOLE_SKIP as skip, useConsolePage, WAIT as wait } from "./browser.js";

describe("the console's load measure in Chromium", { skip }, () => {
  const ctx = useTestServer("local");
  const session = useConsolePage(() => ctx.server.url);
  const busy = uniqueName("LoadBusy");
  const quiet = uniqueName("LoadQuiet");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
  /** The API requests that measured load, as the browser sent them. */
  const measures: string[] = [];

  it("setup: a queue with 40 appends of 1 KiB at one instant, and a quiet queue with one message", async () => {
    const a = api();
    for (const topic of [busy, quiet]) {
      await a.updateTopic(topic, { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
    }
    const ahead = Date.now() + 10 * 60_000;
    const log = new QueueLog(ctx.server.server.storage, { now: () => ahead });
    const body = new Uint8Array(1024).fill(7);
    for (let i = 0; i < 40; i++) await log.append({ topic: busy, brokerName: "broker-a", queueId: 0 }, [record(body)]);
    await a.send({
      topic: quiet,
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode("q") }],
    });
    session.page.on("request", (request) => {
      if (request.url().includes("load=true")) measures.push(request.url());
    });
  });

  it("a busy queue: nothing measured on opening; the button shows its load and the warning naming what helps", async () => {
    const { page } = session;
    await page.goto(session.consoleUrl(`#/topics/${busy}`));
    await page.getByTestId("queue-row").first().waitFor(wait);
    assert.deepEqual(measures, [], "opening the topic measures nothing");
    assert.equal(await page.getByTestId("load-warning").count(), 0);
    assert.equal(await page.getByRole("columnheader", { name: "Busiest key" }).count(), 0);

    await page.getByRole("button", { name: "Measure load" }).click();
    const warning = page.getByTestId("load-warning");
    await warning.waitFor(wait);
    const text = await warning.innerText();
    assert.match(text, /Near the write limit: broker-a\/0 at 128 % of a partition key's 1,000 write units\/s/);
    for (const remedy of ["more write queues", "batching", "hotTopics", "docs/deploy.md"]) {
      assert.ok(text.includes(remedy), `the warning names ${remedy}: ${text}`);
    }
    assert.equal(await page.getByTestId("busiest-key-share").innerText(), "128 %");
    const row = (await page.getByTestId("queue-row").innerText()).split("\t");
    assert.deepEqual(row.slice(-4), ["640", "640", "1", "128 %"], "32 appends of one message in 50 ms, one key");
    assert.equal(measures.length, 1, "one measure per click");
    assert.match(measures[0] ?? "", new RegExp(`/topics/${busy}/status\\?load=true$`));
    await session.shot("topic-load");
  });

  it("a quiet queue: the all-clear, no warning", async () => {
    const { page } = session;
    await page.goto(session.consoleUrl(`#/topics/${quiet}`));
    await page.getByTestId("queue-row").first().waitFor(wait);
    await page.getByRole("button", { name: "Measure load" }).click();
    await page.getByTestId("load-ok").waitFor(wait);
    assert.match(await page.getByTestId("load-ok").innerText(), /every queue below 80 %/);
    assert.equal(await page.getByTestId("load-warning").count(), 0);
    const share = Number.parseInt(await page.getByTestId("busiest-key-share").innerText(), 10);
    assert.ok(share < 80, `one message reads far below the limit (${share} %)`);
    assert.equal(measures.length, 2);
  });
});
