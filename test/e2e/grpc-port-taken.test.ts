/**
 * @module A local server whose gRPC port is taken fails to start and leaves nothing listening: the remoting door's
 * broker ports (opened before the gRPC port is tried) are closed again, as is the HTTP port. Checked by listening on
 * those ports afterwards, not by time.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { startLocalServer } from "../../lib/dev/local-server.js";

const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(port, "127.0.0.1", () => resolve(s));
  });
const closeServer = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));
const freePort = async () => {
  const s = await listenOn(0);
  const { port } = s.address() as AddressInfo;
  await closeServer(s);
  return port;
};

describe("a local server whose gRPC port is taken", () => {
  it("fails to start and leaves its HTTP and remoting ports free", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-grpc-taken-"));
    const taken = await listenOn(0);
    const [httpPort, brokerBPort] = [await freePort(), await freePort()];
    try {
      await assert.rejects(
        startLocalServer({
          port: httpPort,
          grpcPort: (taken.address() as AddressInfo).port,
          remotingBrokerPorts: { "broker-b": brokerBPort },
          storage: { kind: "local", dataDir },
          config: parseNimbusConfig({}),
        }),
        /gRPC/,
      );
      for (const port of [httpPort, brokerBPort]) await closeServer(await listenOn(port));
    } finally {
      await closeServer(taken);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
