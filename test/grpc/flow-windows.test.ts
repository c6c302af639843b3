/**
 * @module The gRPC door's HTTP/2 flow-control windows (lib/grpc/flow-windows.ts): a client connecting to a grpc-js
 * server they were widened on is told 1 MiB per stream in the server's SETTINGS, and may send 1 MiB on the
 * connection before a WINDOW_UPDATE, where HTTP/2's initial window is 64 KiB.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import { describe, it } from "node:test";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { FLOW_WINDOW_BYTES, widenFlowWindows } from "../../lib/grpc/flow-windows.js";

async function boundServer(): Promise<{ server: Server; port: number }> {
  const server = new Server();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  return { server, port };
}

/** What a client learns of the server's windows: the streams' from SETTINGS, the connection's after a ping. */
async function windowsSeen(port: number): Promise<{ stream: number | undefined; connection: number | undefined }> {
  const client = http2.connect(`http://127.0.0.1:${port}`);
  try {
    const settings = await new Promise<http2.Settings>((resolve) => client.once("remoteSettings", resolve));
    // The server's WINDOW_UPDATE of the connection follows its SETTINGS; a ping's answer comes after both.
    await new Promise<void>((resolve, reject) => client.ping((err) => (err ? reject(err) : resolve())));
    return { stream: settings.initialWindowSize, connection: client.state.remoteWindowSize };
  } finally {
    client.close();
  }
}

describe("gRPC door: HTTP/2 flow-control windows", () => {
  it("a client may send 1 MiB per stream and on the connection before the server's next WINDOW_UPDATE", async () => {
    const { server, port } = await boundServer();
    try {
      assert.equal(widenFlowWindows(server), true);
      assert.deepEqual(await windowsSeen(port), { stream: FLOW_WINDOW_BYTES, connection: FLOW_WINDOW_BYTES });
    } finally {
      server.forceShutdown();
    }
  });

  it("without it, grpc-js leaves HTTP/2's initial 64 KiB (what the change is measured against)", async () => {
    const { server, port } = await boundServer();
    try {
      assert.deepEqual(await windowsSeen(port), { stream: 65_535, connection: 65_535 });
    } finally {
      server.forceShutdown();
    }
  });
});
