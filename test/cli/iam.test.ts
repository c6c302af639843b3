/**
 * `--iam`: the built CLI signs its requests with SigV4 from the standard AWS variables, as an IAM-protected
 * stage needs. A loopback server stands in for API Gateway: it recomputes the signature and refuses a wrong one.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { signRequest } from "../../lib/client/transport/sigv4.js";
import { ensureBuilt, nimbus } from "../support/cli-runner.js";

const KEYS = { accessKeyId: "AKIDNIMBUSTEST", secretAccessKey: "nimbus-test-secret" };
const AWS_ENV = { AWS_ACCESS_KEY_ID: KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: KEYS.secretAccessKey };

describe("nimbus --iam (SigV4)", () => {
  let server: Server;
  let url = "";
  const seen: { authorized: boolean }[] = [];

  before(async () => {
    await ensureBuilt();
    server = createServer((req, res) => {
      const auth = req.headers.authorization ?? "";
      const signed = /SignedHeaders=([a-z0-9;-]+)/.exec(auth)?.[1]?.split(";") ?? [];
      const headers: Record<string, string> = {};
      for (const name of signed) headers[name] = String(req.headers[name] ?? "");
      const amzDate = String(req.headers["x-amz-date"] ?? "");
      const now = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
      const expected = Number.isNaN(now.getTime())
        ? undefined
        : signRequest({
            method: req.method ?? "GET",
            url: `http://${req.headers.host}${req.url}`,
            headers,
            region: "eu-west-1",
            credentials: KEYS,
            now,
          });
      const authorized = expected !== undefined && expected.authorization === auth;
      seen.push({ authorized });
      res.writeHead(authorized ? 200 : 403, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          authorized ? { topics: ["SignedTopic"] } : { message: "The request signature we calculated does not match" },
        ),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("signs with the environment's credentials and the region", async () => {
    const result = await nimbus(["topicList", "--iam", "--region", "eu-west-1", "--json"], { url, env: AWS_ENV });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { topics: ["SignedTopic"] });
    assert.equal(seen.at(-1)?.authorized, true);
  });

  it("a wrong secret is refused: exit 1 with NO_PERMISSION", async () => {
    const result = await nimbus(["topicList", "--iam", "--region", "eu-west-1"], {
      url,
      env: { ...AWS_ENV, AWS_SECRET_ACCESS_KEY: "wrong" },
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^nimbus: NO_PERMISSION: The request signature we calculated does not match\n$/);
  });

  it("without credentials it says what is missing and sends nothing", async () => {
    const before = seen.length;
    const result = await nimbus(["topicList", "--iam", "--region", "eu-west-1"], {
      url,
      env: { AWS_ACCESS_KEY_ID: "", AWS_SECRET_ACCESS_KEY: "" },
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /--iam needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
    assert.equal(seen.length, before);
  });
});
