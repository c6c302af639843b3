/**
 * @module Issue 26, finding 6: the AWS adapters time out a hung connection. An endpoint that accepts connections
 * and never answers (what a stuck load balancer or a half-open socket looks like) makes a DynamoDB get and an S3
 * put fail as SYSTEM_BUSY after the configured request timeout, instead of hanging until the process dies.
 */
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { ROUTES_TABLE } from "../../lib/broker/store/tables.js";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import { createAwsStorage } from "../../lib/storage/aws/index.js";
import type { Storage } from "../../lib/storage/storage.js";

describe("AWS adapters time out a hung connection", { timeout: 120_000 }, () => {
  let silent: Server;
  let storage: Storage;
  const held: Socket[] = [];
  let accepted = 0;

  before(async () => {
    // Reads whatever comes, answers nothing, closes nothing.
    silent = createServer((socket) => {
      accepted++;
      held.push(socket);
      socket.on("data", () => {});
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    const endpoint = `http://127.0.0.1:${port}`;
    storage = createAwsStorage({
      region: "us-east-1",
      bucket: "hung",
      dynamoEndpoint: endpoint,
      s3Endpoint: endpoint,
      credentials: { accessKeyId: "k", secretAccessKey: "s" },
      maxAttempts: 1,
      timeouts: { dynamoRequestMs: 300, s3RequestMs: 300 },
    });
  });
  after(async () => {
    await storage.close();
    for (const s of held) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  const busy = (err: unknown) => err instanceof NimbusError && err.code === ErrorCode.SYSTEM_BUSY;

  it("a DynamoDB get fails as SYSTEM_BUSY", async () => {
    await assert.rejects(storage.table(ROUTES_TABLE).get({ pk: "p", sk: "s" }), busy);
  });

  it("an S3 put fails as SYSTEM_BUSY", async () => {
    await assert.rejects(storage.objects.put("k", new Uint8Array(10)), busy);
    assert.ok(accepted >= 2, "both requests reached the silent endpoint");
  });
});
