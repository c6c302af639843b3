/**
 * The console's Search view in a real browser (headless Chromium) against a fresh local broker: a key on 70
 * messages over two brokers answers a page of 64 and a "More" page of the rest; a message id finds its one
 * message and its link opens the message view; a topic with key indexing off shows the API's refusal. Every wait
 * is a wait for a state, bounded by TEST_TIMEOUT_MS only as a failure bound.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { SendResponse } from "../../lib/protocol/index.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { CONSOLE_SKIP as skip, useConsolePage, WAIT as wait } from "./browser.js";

describe("the console's search in Chromium", { skip }, () => {
  const ctx = useTestServer("local");
  const topic = uniqueName("SearchOrders");
  const quiet = uniqueName("SearchNoKeys");
  const sent: SendResponse[] = [];
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
  const session = useConsolePage(() => ctx.server.url);

  before(async () => {
    await api().updateTopic(topic, { readQueueNums: 2, writeQueueNums: 2 });
    await api().updateTopic(quiet, { readQueueNums: 1, writeQueueNums: 1, keyIndex: false });
    const body = new TextEncoder().encode("order");
    for (const [brokerName, n] of [
      ["broker-a", 30],
      ["broker-b", 30],
      ["broker-a", 10],
    ] as const) {
      const messages = Array.from({ length: n }, (_, i) => ({ body, keys: ["bulk", `one-${brokerName}-${i}`] }));
      sent.push(await api().send({ topic, brokerName, queueId: 0, messages }));
    }
  });

  const search = async (t: string, by: "key" | "id", text: string) => {
    const page = session.page;
    await page.goto(session.consoleUrl("#/search"));
    await page.getByLabel("Topic").fill(t);
    await page.getByLabel("By").selectOption(by);
    await page.getByLabel("Key or id").fill(text);
    await page.getByRole("button", { name: "Search" }).click();
  };

  it("a key on many messages: a page of 64, then More for the rest", async () => {
    await search(topic, "key", "bulk");
    const rows = session.page.getByTestId("found-row");
    await rows.nth(63).waitFor(wait);
    assert.equal(await rows.count(), 64);
    await session.shot("search");
    await session.page.getByRole("button", { name: "More →" }).click();
    await waitUntil(async () => (await rows.count()) === 6, "the next page's 6 rows", TEST_TIMEOUT_MS);
    assert.equal(await session.page.getByRole("button", { name: "More →" }).count(), 0);
  });

  it("a message id finds its message, and its link opens the message", async () => {
    const id = sent[1]?.msgIds[7] as string;
    await search(topic, "id", id);
    const row = session.page.getByTestId("found-row");
    await row.first().waitFor(wait);
    assert.equal(await row.count(), 1);
    assert.match(await row.innerText(), /broker-b\/0/);
    await session.page.getByRole("link", { name: id }).click();
    const headers = session.page.getByTestId("message-headers");
    await headers.waitFor(wait);
    assert.match(await headers.innerText(), new RegExp(id));
  });

  it("a topic with key indexing off shows the API's refusal", async () => {
    await search(quiet, "key", "bulk");
    const alert = session.page.getByRole("alert");
    await alert.waitFor(wait);
    assert.match(await alert.innerText(), /PARAMETER_ILLEGAL.*does not index its messages' keys/s);
  });
});

if (skip) describe("the console's search in Chromium", () => it(`skipped: ${skip}`, { skip }, () => {}));
