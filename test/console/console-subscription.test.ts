/**
 * The group page's subscription section in a real browser (headless Chromium via playwright-core) against a
 * fresh local broker: a group without a subscription says so; one PUT over HTTP shows its topic, target URL
 * (never its secret), batch and ordering; Delete on the page ends it (the API then answers 404). Skipped
 * (with the reason) only when /usr/bin/chromium is missing. Every wait is a wait for a state.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expectError, ok } from "../support/http.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { CONSOLE_SKIP as skip, useConsolePage, WAIT as wait } from "./browser.js";

describe("the group page's subscription in Chromium", { skip }, () => {
  const ctx = useTestServer("local");
  const session = useConsolePage(() => ctx.server.url);
  const group = uniqueName("consoleHook");
  const secret = "whsec-console-0123456789";

  it("none, then the definition without its secret, then Delete ends it", async () => {
    await session.page.goto(session.consoleUrl(`#/groups/${group}`));
    await session.page.getByTestId("subscription-none").waitFor(wait);
    const topic = uniqueName("ConsoleSubTopic");
    ok(await ctx.http.put(`/topics/${topic}`, {}));
    const url = "http://127.0.0.1:9/hook";
    ok(
      await ctx.http.put(`/subscriptions/${group}`, {
        topic,
        target: { type: "http", url, secret },
        batchSize: 32,
        ordering: "queue",
      }),
    );
    await session.page.reload();
    const shown = session.page.getByTestId("subscription");
    await shown.waitFor(wait);
    const text = await shown.innerText();
    assert.equal(await session.page.getByTestId("subscription-target").innerText(), url);
    assert.match(text, new RegExp(topic));
    assert.match(text, /32 messages/);
    assert.match(text, /queue/);
    assert.ok(!(await session.page.content()).includes(secret), "the secret is never shown");
    assert.equal(await session.page.getByTestId("subscription-last-error").innerText(), "none");
    // A delivery failed (as the dispatcher records it: test/e2e/subscription-errors.test.ts): the page says why.
    await ctx.server.server.context.broker.subscriptions.recordDeliveryError(
      group,
      "the target answered 503",
      Date.now(),
    );
    await session.page.reload();
    await session.page.getByTestId("subscription").waitFor(wait);
    assert.match(
      await session.page.getByTestId("subscription-last-error").innerText(),
      /UTC: the target answered 503$/,
    );
    await session.shot("group-subscription");
    await session.page.getByRole("button", { name: "Delete subscription" }).click();
    await session.page.getByTestId("subscription-none").waitFor(wait);
    expectError(await ctx.http.get(`/subscriptions/${group}`), 404, "SUBSCRIPTION_GROUP_NOT_EXIST");
  });
});

if (skip) describe("the group page's subscription in Chromium", () => it(`skipped: ${skip}`, { skip }, () => {}));
