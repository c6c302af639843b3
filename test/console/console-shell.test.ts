/**
 * The console's shell in a real browser (headless Chromium via playwright-core) against a fresh local broker:
 * its files served at /console (and other paths under it refused with the API's error shape), the connection
 * settings that make every API request carry a signature, keyboard navigation, and a transaction looked up
 * by id. The views with data are
 * console.test.ts. Skipped (with the reason) only when /usr/bin/chromium is missing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/index.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";
import { CONSOLE_SKIP as skip, useConsolePage, WAIT as wait } from "./browser.js";

describe("the console's shell in Chromium", { skip }, () => {
  const ctx = useTestServer("local");
  const topic = uniqueName("ConsoleTx");
  const producerGroup = uniqueName("consoleTxProducers");
  const session = useConsolePage(() => ctx.server.url);
  const { consoleUrl, shot } = session;
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

  it("serves the console at /console and refuses other paths under it with the API's error shape", async () => {
    const index = await fetch(`${ctx.server.url}/console/`);
    assert.equal(index.status, 200);
    assert.match(index.headers.get("content-type") ?? "", /text\/html/);
    const redirect = await fetch(`${ctx.server.url}/console`, { redirect: "manual" });
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.get("location"), "/console/");
    for (const bad of ["/console/missing.js", "/console/..%2Fpackage.json", "/console/sub/dir.js"]) {
      const r = await fetch(`${ctx.server.url}${bad}`);
      assert.equal(r.status, 404, bad);
      const body = (await r.json()) as { code: string; message: string };
      assert.equal(body.code, "REQUEST_CODE_NOT_SUPPORTED");
      assert.match(body.message, /no console file/);
    }
  });

  it("connection: with AWS keys or a Nimbus user's keys every API request carries their signature", async () => {
    await session.page.goto(consoleUrl("#/connection"));
    await session.page.getByLabel("Auth").selectOption("sigv4");
    await session.page.getByLabel("Region").fill("eu-west-1");
    await session.page.getByLabel("Access key id").fill("AKIDCONSOLETEST");
    await session.page.getByLabel("Secret access key").fill("secret");
    await session.page.getByRole("button", { name: "Connect" }).click();
    await session.page.getByRole("status").filter({ hasText: "Saved." }).waitFor(wait);
    const signed = session.page.waitForRequest((r) => r.url().endsWith("/brokers"), wait);
    await session.page.goto(consoleUrl("#/cluster"));
    const headers = (await signed).headers();
    assert.match(
      headers.authorization ?? "",
      /^AWS4-HMAC-SHA256 Credential=AKIDCONSOLETEST\/\d{8}\/eu-west-1\/execute-api\//,
    );
    assert.match(headers["x-amz-date"] ?? "", /^\d{8}T\d{6}Z$/);
    // A Nimbus user's keys: the Nimbus signature (service and region "nimbus", a nonce).
    await session.page.goto(consoleUrl("#/connection"));
    await session.page.getByLabel("Auth").selectOption("nimbus");
    await session.page.getByLabel("Access key (user name)").fill("console-user");
    await session.page.getByLabel("Secret key (password)").fill("s3cret-of-the-user");
    await session.page.getByRole("button", { name: "Connect" }).click();
    await session.page.getByRole("status").filter({ hasText: "Saved." }).waitFor(wait);
    const nimbusSigned = session.page.waitForRequest((r) => r.url().endsWith("/brokers"), wait);
    await session.page.goto(consoleUrl("#/cluster"));
    const nimbusHeaders = (await nimbusSigned).headers();
    assert.match(
      nimbusHeaders.authorization ?? "",
      /Credential=console-user\/\d{8}\/nimbus\/nimbus\/aws4_request, SignedHeaders=[^,]*x-nimbus-nonce/,
    );
    assert.match(nimbusHeaders["x-nimbus-nonce"] ?? "", /^[0-9a-f-]{36}$/);
    // Back to no signing for the rest (the local broker does not check signatures).
    await session.page.goto(consoleUrl("#/connection"));
    await session.page.getByLabel("Auth").selectOption("none");
    await session.page.getByRole("button", { name: "Connect" }).click();
    await session.page.getByRole("status").filter({ hasText: "Saved." }).waitFor(wait);
  });

  it("transactions: an unknown id shows the API's refusal; a committed one its state and delivered message", async () => {
    await session.page.goto(consoleUrl(`#/transactions?id=nope&group=${producerGroup}`));
    const refusal = session.page.getByRole("alert").first();
    await refusal.waitFor(wait);
    assert.match(await refusal.innerText(), /^QUERY_NOT_FOUND: /);

    const half = await api().sendHalfMessage({
      producerGroup,
      topic,
      message: { body: new TextEncoder().encode("half-body"), tags: "tx" },
    });
    const ended = await api().endTransaction(half.transactionId, { producerGroup, commitOrRollback: "COMMIT_MESSAGE" });
    await session.page.goto(consoleUrl(`#/transactions?id=${half.transactionId}&group=${producerGroup}`));
    const info = session.page.getByTestId("transaction");
    await info.filter({ hasText: "COMMITTED" }).waitFor(wait);
    assert.match(await info.innerText(), new RegExp(`offset ${ended.queueOffset}`));
    await session.page.getByText("half-body").waitFor(wait);
    await shot("transactions");
  });

  it("keyboard: Tab reaches the views and Enter opens one", async () => {
    await session.page.goto(consoleUrl("#/cluster"));
    await session.page.getByTestId("broker-row").first().waitFor(wait);
    let focused = "";
    for (let i = 0; i < 10 && focused !== "Topics"; i++) {
      await session.page.keyboard.press("Tab");
      focused = String(await session.page.evaluate('document.activeElement?.textContent ?? ""'));
    }
    assert.equal(focused, "Topics");
    await session.page.keyboard.press("Enter");
    await session.page.getByRole("heading", { name: "Topics", exact: true }).waitFor(wait);
  });
});

if (skip) describe("the console's shell in Chromium", () => it(`skipped: ${skip}`, { skip }, () => {}));
