/**
 * @module HTTP/2 flow-control windows of the gRPC door as wide as grpc-java's (RocketMQ's Proxy): 1 MiB for the
 * connection and for each stream, instead of HTTP/2's initial 64 KiB that grpc-js leaves. A producer with 64 sends
 * of 1 KiB in flight has more than 64 KiB on its way: under the initial window it stops and waits for the server's
 * WINDOW_UPDATE (sent once half the window is read) before its next frames, which costs it wake-ups and round
 * trips per message. What the server may then hold unread per connection is bounded by the window.
 * grpc-js 1.14 sets neither window on its server and keeps its HTTP/2 servers in a private field (as
 * long-deadlines.ts finds them); if a later version renames it, this finds none and says so.
 */
import type { Http2Server, ServerHttp2Session } from "node:http2";
import type { Server } from "@grpc/grpc-js";

/** The connection's and each stream's receive window: grpc-java's default flow-control window. */
export const FLOW_WINDOW_BYTES = 1 << 20;

function widenSession(session: ServerHttp2Session): void {
  session.setLocalWindowSize(FLOW_WINDOW_BYTES);
}

/** Widens the windows of every HTTP/2 server of `server` (call after it is bound). True when it found one. */
export function widenFlowWindows(server: Server): boolean {
  const servers = (server as unknown as { http2Servers?: Map<Http2Server, unknown> }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) {
    console.error("nimbus grpc: cannot widen the flow-control windows (grpc-js internals changed)");
    return false;
  }
  for (const http2 of servers.keys()) {
    // Each stream's window, in the SETTINGS a new connection gets first; the connection's own on its session.
    http2.updateSettings({ initialWindowSize: FLOW_WINDOW_BYTES });
    http2.on("session", widenSession);
  }
  return true;
}
