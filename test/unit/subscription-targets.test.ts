/**
 * Subscription targets against real endpoints on loopback: an HTTP server as the HTTPS target (signature checked
 * there with the SDK's verify helper; 500, a timeout, a redirect, partial failures) and the AWS SDK's Lambda client
 * against a local Invoke API (test/support/invoke-api-server.ts) with the function's error reporting.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { deliveryBody, HttpTarget, LambdaTarget, targetAgent } from "../../lib/broker/subscriptions/index.js";
import {
  DELIVERY_SIGNATURE_HEADER,
  type NimbusBatchResponse,
  type NimbusEvent,
  signDelivery,
  verifyDeliverySignature,
} from "../../lib/client/index.js";
import { type InvokeApiServer, startInvokeApiServer } from "../support/invoke-api-server.js";

const SECRET = "whsec-0123456789abcdef";
const message = (msgId: string, queueOffset: number) => ({
  msgId,
  topic: "Orders",
  brokerName: "broker-a",
  queueId: 0,
  queueOffset,
  tags: "TagA",
  keys: undefined,
  properties: { region: "eu" },
  body: new TextEncoder().encode(`body-${msgId}`),
  reconsumeTimes: 0,
});
const BODY = deliveryBody([message("M1", 0), message("M2", 1), message("M3", 2)]);

describe("delivery signatures", () => {
  it("verify accepts what sign made and refuses another body, secret, old time or garbage", () => {
    const header = signDelivery(SECRET, BODY, 1_800_000_000);
    assert.match(header, /^t=1800000000, v1=[0-9a-f]{64}$/);
    assert.deepEqual(verifyDeliverySignature(SECRET, BODY, header, { nowSeconds: 1_800_000_010 }), {
      valid: true,
      timestamp: 1_800_000_000,
    });
    const at = { nowSeconds: 1_800_000_000 };
    assert.equal(verifyDeliverySignature(SECRET, `${BODY} `, header, at).valid, false);
    assert.equal(verifyDeliverySignature(`${SECRET}x`, BODY, header, at).valid, false);
    assert.deepEqual(verifyDeliverySignature(SECRET, BODY, header, { nowSeconds: 1_800_000_301 }), {
      valid: false,
      reason: "stale",
    });
    for (const bad of [undefined, "", "t=1", "v1=ab", "t=x, v1=00", "x".repeat(2000)])
      assert.deepEqual(verifyDeliverySignature(SECRET, BODY, bad, at), { valid: false, reason: "malformed" });
  });
});

describe("the HTTPS target", () => {
  type Reply = (req: IncomingMessage, res: ServerResponse, raw: string) => void;
  let server: Server;
  let base = "";
  const seen: { path: string; signature: boolean; records: number }[] = [];
  const replies: Record<string, Reply> = {
    "/ok": (_q, res) => res.end(),
    "/partial": (_q, res) => res.end(JSON.stringify({ batchItemFailures: [{ itemIdentifier: "M2" }] })),
    "/id-list": (_q, res) => res.end(JSON.stringify(["M1", "M3"])),
    "/unknown-id": (_q, res) => res.end(JSON.stringify({ batchItemFailures: [{ itemIdentifier: "M9" }] })),
    "/fail": (_q, res) => {
      res.statusCode = 500;
      res.end("boom");
    },
    "/redirect": (_q, res) => {
      res.writeHead(307, { location: `${base}/ok` });
      res.end();
    },
    "/hang": () => undefined,
  };

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const check = verifyDeliverySignature(
          SECRET,
          raw,
          req.headers[DELIVERY_SIGNATURE_HEADER] as string | undefined,
        );
        const records = (JSON.parse(raw) as { Records: unknown[] }).Records.length;
        seen.push({ path: req.url ?? "", signature: check.valid, records });
        replies[req.url ?? ""]?.(req, res, raw);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  const agent = targetAgent("loopback");
  after(async () => {
    server.closeAllConnections();
    server.close();
    await agent.close();
  });

  const deliver = (path: string, timeoutMs = 30_000) =>
    new HttpTarget(`${base}${path}`, SECRET, timeoutMs, agent, "loopback").deliver(BODY, new AbortController().signal);

  it("a 2xx is success; the target sees a valid signature over the raw body and every record", async () => {
    assert.deepEqual(await deliver("/ok"), { kind: "success", failedIds: [] });
    assert.deepEqual(seen.at(-1), { path: "/ok", signature: true, records: 3 });
  });

  it("batchItemFailures, or a JSON list of ids, fails just those; an unknown id fails the batch", async () => {
    assert.deepEqual(await deliver("/partial"), { kind: "success", failedIds: ["M2"] });
    assert.deepEqual(await deliver("/id-list"), { kind: "success", failedIds: ["M1", "M3"] });
    assert.equal((await deliver("/unknown-id")).kind, "failure");
  });

  it("a 500 fails the batch", async () => {
    const outcome = await deliver("/fail");
    assert.equal(outcome.kind, "failure");
    assert.match(outcome.kind === "failure" ? outcome.reason : "", /500/);
  });

  it("a redirect is a failure and is not followed", async () => {
    const before = seen.filter((s) => s.path === "/ok").length;
    const outcome = await deliver("/redirect");
    assert.equal(outcome.kind, "failure");
    assert.match(outcome.kind === "failure" ? outcome.reason : "", /redirect/);
    assert.equal(seen.filter((s) => s.path === "/ok").length, before, "the redirect's location was never called");
  });

  it("no answer within the timeout is a failure (the path taken, not the time)", async () => {
    const outcome = await deliver("/hang", 1000);
    assert.equal(outcome.kind, "failure");
    assert.match(outcome.kind === "failure" ? outcome.reason : "", /no answer within 1000 ms/);
  });
});

describe("the Lambda target through the AWS SDK's Lambda client", () => {
  let invoke: InvokeApiServer;
  let client: LambdaClient;
  const arn = (name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`;

  before(async () => {
    invoke = await startInvokeApiServer({
      ok: async () => ({}),
      partial: async (event) => {
        // The SDK's typed event, as a subscriber function reads it.
        const { Records } = event as NimbusEvent;
        const response: NimbusBatchResponse = { batchItemFailures: [{ itemIdentifier: Records[0]?.messageId ?? "" }] };
        return response;
      },
      throws: async () => {
        throw new TypeError("cannot read order");
      },
    });
    client = new LambdaClient({
      endpoint: invoke.url,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
      maxAttempts: 1,
    });
  });
  after(async () => {
    client.destroy();
    await invoke.close();
  });

  const deliver = (name: string) =>
    new LambdaTarget(client, arn(name), 30_000).deliver(BODY, new AbortController().signal);

  it("a result is success; the function got the delivery as its event", async () => {
    assert.deepEqual(await deliver("ok"), { kind: "success", failedIds: [] });
    const event = invoke.invocations.get("ok")?.[0] as { Records: { messageId: string; body: string }[] };
    assert.deepEqual(
      event.Records.map((r) => r.messageId),
      ["M1", "M2", "M3"],
    );
    assert.equal(Buffer.from(event.Records[0]?.body ?? "", "base64").toString(), "body-M1");
  });

  it("batchItemFailures fails just those", async () => {
    assert.deepEqual(await deliver("partial"), { kind: "success", failedIds: ["M1"] });
  });

  it("a thrown error (X-Amz-Function-Error) fails the batch", async () => {
    const outcome = await deliver("throws");
    assert.equal(outcome.kind, "failure");
    assert.match(outcome.kind === "failure" ? outcome.reason : "", /Unhandled.*cannot read order/);
  });

  it("an unknown function fails the batch", async () => {
    const outcome = await deliver("missing");
    assert.equal(outcome.kind, "failure");
    assert.match(outcome.kind === "failure" ? outcome.reason : "", /invoke failed/);
  });
});
