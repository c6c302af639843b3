/**
 * @module The built `nimbus dev` and its ports: the gRPC port follows `--port` (9876 → 8081, so P → P − 1795), so
 * a second broker on another `--port` starts beside the first; a taken port stops the start with a message that
 * names the option to change (`--port` for HTTP, `--grpc-port` for gRPC) and nothing keeps running.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { grpcPortOf } from "../../lib/cli/dev-servers.js";
import { ensureBuilt, nimbus, spawnNimbus } from "../support/cli-runner.js";

/** Two free ports P and P − 1795 (the gRPC port that follows P). */
async function freePair(): Promise<{ http: number; grpc: number }> {
  for (;;) {
    const http = await listenOn(0);
    const port = (http.address() as { port: number }).port;
    const grpcPort = port - 1795;
    const grpc = grpcPort > 1024 ? await listenOn(grpcPort).catch(() => undefined) : undefined;
    await close(http);
    if (grpc !== undefined) {
      await close(grpc);
      return { http: port, grpc: grpcPort };
    }
  }
}

function listenOn(port: number): Promise<ReturnType<typeof createServer>> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

const close = (server: ReturnType<typeof createServer>) =>
  new Promise<void>((resolve) => server.close(() => resolve()));

describe("nimbus dev: ports (the built CLI)", () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-ports-"));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("follows --port with the gRPC port, 9876 → 8081; --grpc-port 0 turns it off", () => {
    assert.deepEqual(grpcPortOf({ port: 9876 }), { grpcPort: 8081 });
    assert.deepEqual(grpcPortOf({ port: 9877 }), { grpcPort: 8082 });
    assert.deepEqual(grpcPortOf({ port: 0 }), { grpcPort: 0 });
    assert.deepEqual(grpcPortOf({ port: 9877, grpcPort: 7000 }), { grpcPort: 7000 });
    assert.deepEqual(grpcPortOf({ port: 9877, grpcPort: 0 }), {});
  });

  it("a second broker on another --port starts beside the first; a taken port names the option to change", async () => {
    await ensureBuilt();
    const first = await freePair();
    const running = spawnNimbus(["dev", "--port", String(first.http), "--data-dir", dataDir()]);
    try {
      await running.waitForStdout(new RegExp(`gRPC endpoint on 127\\.0\\.0\\.1:${first.grpc}`));
      // The same --port: HTTP is taken.
      const sameHttp = await nimbus(["dev", "--port", String(first.http), "--grpc-port", "0", "--data-dir", dataDir()]);
      assert.equal(sameHttp.code, 1, sameHttp.stderr);
      assert.match(sameHttp.stderr, new RegExp(`HTTP port 127\\.0\\.0\\.1:${first.http} is already in use.*--port`));
      // Another --port, the first one's gRPC port: gRPC is taken, and the HTTP port it opened is closed again.
      const second = await freePair();
      const sameGrpc = await nimbus([
        "dev",
        ...["--port", String(second.http), "--grpc-port", String(first.grpc), "--data-dir", dataDir()],
      ]);
      assert.equal(sameGrpc.code, 1, sameGrpc.stderr);
      assert.match(
        sameGrpc.stderr,
        new RegExp(`gRPC port 127\\.0\\.0\\.1:${first.grpc} is already in use.*--grpc-port`),
      );
      await close(await listenOn(second.http)); // free again: nothing of the failed start keeps it
      // Another --port alone: its gRPC port follows it, and it runs beside the first.
      const beside = spawnNimbus(["dev", "--port", String(second.http), "--data-dir", dataDir()]);
      try {
        await beside.waitForStdout(new RegExp(`gRPC endpoint on 127\\.0\\.0\\.1:${second.grpc}`));
      } finally {
        beside.child.kill("SIGINT");
        await beside.exited;
      }
    } finally {
      running.child.kill("SIGINT");
      await running.exited;
    }
  });
});
