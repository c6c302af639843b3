/**
 * @module Which addresses subscription targets may reach (lib/core/target-address.ts), on every spelling a URL
 * accepts for loopback (`127.1`, `2130706433`, `0x7f.1`, IPv4-mapped IPv6), metadata services (169.254.169.254)
 * and private networks; and the pool's lookup (lib/broker/subscriptions/target-agent.ts): a name that resolves
 * to a refused address is refused when dialled, so an HTTPS target there never gets a request (nor the signature).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { allowedLookup, deliveryBody, HttpTarget, targetAgent } from "../../lib/broker/subscriptions/index.js";
import { stageConfig } from "../../lib/cli/dev-servers.js";
import { awsTargetNetworks, parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { StageSettingsSchema } from "../../lib/config/stages.js";
import { addressProblem, type TargetNetworks, urlHostProblem } from "../../lib/core/target-address.js";

const host = (url: string) => new URL(url).hostname;

describe("target addresses", () => {
  it("every loopback spelling a URL accepts is loopback; allowed only where loopback is", () => {
    for (const url of [
      "http://127.0.0.1:9001/",
      "http://127.1/",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://0177.0.0.1/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://localhost:9001/",
      "http://localhost./",
      "http://127.0.0.1./",
    ]) {
      assert.match(urlHostProblem(url, "public") ?? "", /loopback/, url);
      assert.match(urlHostProblem(url, "private") ?? "", /loopback/, url);
      assert.equal(urlHostProblem(url, "loopback"), undefined, url);
    }
  });

  it("link-local (metadata services), unspecified and multicast are never allowed", () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "http://169.254.170.2/v2/credentials",
      "http://0.0.0.0/",
      "http://[fe80::1]/",
      "http://[::ffff:169.254.169.254]/",
      "http://224.0.0.1/",
      "http://[::]/",
      // AWS's IPv6 metadata service, and 169.254.169.254 through NAT64.
      "http://[fd00:ec2::254]/",
      "http://[64:ff9b::169.254.169.254]/",
    ]) {
      for (const networks of ["public", "private", "loopback"] as TargetNetworks[])
        assert.match(urlHostProblem(url, networks) ?? "", /link-local, metadata/, `${url} ${networks}`);
    }
  });

  it("private networks need `private`; public addresses and names pass (names are checked when dialled)", () => {
    for (const a of ["10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "100.64.0.1", "fd00::1"]) {
      assert.match(addressProblem(a, "public") ?? "", /private/, a);
      assert.equal(addressProblem(a, "private"), undefined, a);
    }
    for (const a of ["93.184.216.34", "172.32.0.1", "2606:4700::1111"])
      assert.equal(addressProblem(a, "public"), undefined);
    assert.equal(urlHostProblem("https://hooks.example.com/x", "public"), undefined);
    assert.equal(host("http://2130706433/"), "127.0.0.1", "the URL parser's form is what is checked");
  });
});

describe("the targets' pool refuses what a name resolves to", () => {
  let server: Server;
  let port = 0;
  let requests = 0;
  before(async () => {
    server = createServer((_req, res) => {
      requests++;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it("`localhost` under `public` fails at the lookup: no request reaches the target", async () => {
    const lookupError = await new Promise<Error | null>((resolve) =>
      allowedLookup("public")("localhost", { family: 4 }, (err) => resolve(err)),
    );
    assert.match(String(lookupError), /resolves to a refused address/);
    const agent = targetAgent("public");
    try {
      const body = deliveryBody([]);
      const outcome = await new HttpTarget(
        `http://localhost:${port}/hook`,
        "s".repeat(16),
        10_000,
        agent,
        "public",
      ).deliver(body, new AbortController().signal);
      assert.equal(outcome.kind, "failure");
      assert.match(outcome.kind === "failure" ? outcome.reason : "", /refused address/);
      // An address in the URL is refused before any connection.
      const literal = await new HttpTarget(
        `http://127.1:${port}/hook`,
        "s".repeat(16),
        10_000,
        agent,
        "public",
      ).deliver(body, new AbortController().signal);
      assert.match(literal.kind === "failure" ? literal.reason : "", /loopback/);
      assert.equal(requests, 0, "the target never saw a request, nor the signature");
    } finally {
      await agent.close();
    }
  });

  it('an allowed target with a secret this process could not open ("") gets no request signed with it', async () => {
    const agent = targetAgent("loopback");
    try {
      const url = `http://127.0.0.1:${port}/hook`;
      const outcome = await new HttpTarget(url, "", 10_000, agent, "loopback").deliver(
        deliveryBody([]),
        new AbortController().signal,
      );
      assert.match(outcome.kind === "failure" ? outcome.reason : "", /does not open here/);
      assert.equal(requests, 0);
    } finally {
      await agent.close();
    }
  });
});

describe("loopback targets are nimbus dev's only", () => {
  const stage = (subscriptionTargetNetworks?: TargetNetworks) =>
    StageSettingsSchema.safeParse({
      region: "us-east-1",
      production: false,
      nimbus: subscriptionTargetNetworks === undefined ? {} : { subscriptionTargetNetworks },
    });

  it("a stage's settings (deployed to AWS) refuse loopback; public and private pass", () => {
    const refused = stage("loopback");
    assert.equal(refused.success, false);
    assert.match(refused.error?.issues[0]?.message ?? "", /loopback" is for nimbus dev only/);
    for (const networks of [undefined, "public", "private"] as const) assert.ok(stage(networks).success, networks);
  });

  it("a function given loopback anyway stops at its start; unset is public", () => {
    assert.throws(
      () => awsTargetNetworks(parseNimbusConfig({ subscriptionTargetNetworks: "loopback" })),
      /runtime API/,
    );
    assert.equal(awsTargetNetworks(parseNimbusConfig({})), "public");
    assert.equal(awsTargetNetworks(parseNimbusConfig({ subscriptionTargetNetworks: "private" })), "private");
  });

  it("nimbus dev: loopback unless --target-networks (or the stage) says otherwise", () => {
    const dev = (targetNetworks?: TargetNetworks) =>
      stageConfig({
        port: 9876,
        host: "127.0.0.1",
        dataDir: ".nimbus",
        storage: "local",
        flush: "async",
        region: "us-east-1",
        tablePrefix: "nimbus-",
        provision: false,
        stage: "local",
        ...(targetNetworks === undefined ? {} : { targetNetworks }),
      }).subscriptionTargetNetworks;
    assert.equal(dev(), undefined, "unset: the local server's default, loopback");
    assert.equal(dev("public"), "public");
  });
});
