/**
 * HTTPS targets and the certificates the dispatcher trusts (lib/broker/subscriptions/target-agent.ts), against a
 * real `node:https` server on loopback with a self-signed certificate (openssl): Node's default trust refuses it,
 * a pool trusting it as an extra CA delivers, and a pool trusting another certificate still refuses it. A CA bundle without a readable certificate is refused up front.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { deliveryBody, HttpTarget, readTargetCa, targetAgent } from "../../lib/broker/subscriptions/index.js";
import { certificateUnavailable, makeTestCertificate, testCertificate } from "../support/test-certificate.js";

const SECRET = "whsec-0123456789abcdef";
const BODY = deliveryBody([
  {
    msgId: "M1",
    topic: "Orders",
    brokerName: "broker-a",
    queueId: 0,
    queueOffset: 0,
    properties: {},
    body: new TextEncoder().encode("hello"),
    reconsumeTimes: 0,
  },
]);

describe("trust of HTTPS targets", { skip: certificateUnavailable }, () => {
  const other = makeTestCertificate();
  let server: Server;
  let url = "";
  let requests = 0;
  before(async () => {
    const tls = testCertificate ?? { cert: Buffer.alloc(0), key: Buffer.alloc(0) };
    server = createServer({ cert: tls.cert, key: tls.key }, (_req, res) => {
      requests++;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
    if (typeof other !== "string") other.remove();
  });
  // The target is on loopback: pools that may reach it.
  const deliver = (agent = targetAgent("loopback")) =>
    new HttpTarget(url, SECRET, 30_000, agent, "loopback").deliver(BODY, new AbortController().signal);

  it("Node's default trust refuses a self-signed target: a failure, and no request reached it", async () => {
    const outcome = await deliver();
    assert.equal(outcome.kind, "failure");
    assert.match(outcome.kind === "failure" ? outcome.reason : "", /could not be reached.*certificate/i);
    assert.equal(requests, 0);
  });

  it("with the certificate as an extra CA the delivery succeeds", async () => {
    const agent = targetAgent("loopback", testCertificate?.cert ?? "");
    try {
      assert.deepEqual(await deliver(agent), { kind: "success", failedIds: [] });
      assert.equal(requests, 1);
    } finally {
      await agent.close();
    }
  });

  it("trusting another certificate does not make this target trusted", async () => {
    assert.notEqual(typeof other, "string", String(other));
    if (typeof other === "string") return;
    const agent = targetAgent("loopback", other.cert);
    try {
      const outcome = await deliver(agent);
      assert.equal(outcome.kind, "failure");
      assert.equal(requests, 1, "no request past the failed handshake");
    } finally {
      await agent.close();
    }
  });

  it("a CA bundle with no certificate, an unreadable one or too many is refused", () => {
    assert.throws(() => readTargetCa("not a certificate"), /no PEM certificate/);
    assert.throws(
      () => readTargetCa("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"),
      /certificate 1 .*not readable/,
    );
    const one = (testCertificate?.cert ?? Buffer.alloc(0)).toString("utf8");
    assert.equal(readTargetCa(one).length, 1);
    assert.throws(() => readTargetCa(one.repeat(101)), /at most 100/);
  });
});
