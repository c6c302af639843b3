/**
 * @module The local server's push channel: WebSocket upgrades at `CHANNEL_PATH` on the HTTP server (the
 * `ws` package), the open sockets in memory, and the `PushGateway` the broker posts hints through. The
 * registrations themselves live in the connections table like on AWS, so both storage modes run the same
 * broker code. Connection ids carry this process's prefix: a process reaches only its own sockets.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { Broker } from "../broker/index.js";
import type { PushGateway } from "../broker/push/index.js";
import type { RequestAuth } from "../http/authorize.js";
import { handleChannelFrame } from "../http/channel-frames.js";
import type { ServerFrame } from "../protocol/index.js";
import { CHANNEL_PATH } from "../protocol/index.js";
import { authorizeChannel } from "./channel-auth.js";

/** The largest frame a client may send (a registration of MAX_CHANNEL_QUEUES queues fits). */
const MAX_FRAME_BYTES = 256 * 1024;

export interface PushSockets {
  /** Open sockets now. */
  readonly size: number;
  /** A frame another process relayed: sent if the connection is one of this process's, else ignored. */
  deliverRelayed(connectionId: string, frame: ServerFrame): void;
  /** Closes every socket (their disconnects run) and stops accepting. */
  close(): Promise<void>;
}

/**
 * Serves the channel on `server`; with `auth`, connects are signed and registrations authorized. `relay` hands a
 * frame for another process's connection to the process that holds it (`nimbus dev --workers`: cluster-bus.ts).
 */
export function servePushChannel(
  server: Server,
  broker: Broker,
  auth?: RequestAuth,
  boundToLoopback = true,
  relay?: (connectionId: string, frame: ServerFrame) => void,
): PushSockets {
  const prefix = randomUUID().slice(0, 8);
  let next = 0;
  const sockets = new Map<string, WebSocket>();
  const work = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    work.add(p);
    void p.finally(() => work.delete(p));
  };
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });

  const gateway: PushGateway = {
    async post(connectionId, frame) {
      if (!connectionId.startsWith(`${prefix}.`)) {
        if (relay === undefined) return "elsewhere";
        relay(connectionId, frame);
        return "sent";
      }
      return deliver(connectionId, frame);
    },
  };
  const deliver = (connectionId: string, frame: ServerFrame): "sent" | "gone" => {
    const ws = sockets.get(connectionId);
    if (ws === undefined || ws.readyState !== ws.OPEN) return "gone";
    ws.send(JSON.stringify(frame));
    return "sent";
  };
  broker.channel.attach(gateway);

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // HTTP's own error listener is gone from an upgrade's socket: a client's reset must not be an uncaught error.
    socket.on("error", () => socket.destroy());
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== CHANNEL_PATH) {
      refuseUpgrade(socket, "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    const decided = authorizeChannel(req, auth, boundToLoopback).then((decision) => {
      if (!decision.ok) {
        const body = JSON.stringify({ code: decision.code, message: decision.message });
        refuseUpgrade(
          socket,
          `HTTP/1.1 ${decision.status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return;
      }
      if (socket.destroyed) return;
      wss.handleUpgrade(req, socket, head, (ws) => accept(ws, decision.user?.username));
    });
    track(
      decided.catch((err: unknown) => {
        console.error("nimbus: push channel connect failed:", err);
        socket.destroy();
      }),
    );
  };
  server.on("upgrade", onUpgrade);

  function accept(ws: WebSocket, username: string | undefined): void {
    const connectionId = `${prefix}.${next++}`;
    sockets.set(connectionId, ws);
    // One frame at a time per connection, in order: a registration must not overtake the previous one,
    // nor the record of who signed the connect (its frames are authorized as that user).
    let chain: Promise<unknown> =
      username === undefined ? Promise.resolve() : broker.channel.connected(connectionId, username);
    track(chain);
    ws.on("message", (data, isBinary) => {
      const text = isBinary ? "" : data.toString();
      chain = chain.then(async () => {
        const answer = await handleChannelFrame(broker, connectionId, text, auth);
        if (answer !== undefined && ws.readyState === ws.OPEN) ws.send(JSON.stringify(answer));
      });
      track(chain);
    });
    ws.on("error", () => ws.terminate());
    ws.on("close", () => {
      sockets.delete(connectionId);
      const gone = chain.then(() => broker.channel.disconnect(connectionId));
      track(gone.catch((err: unknown) => console.error("nimbus: push channel disconnect failed:", err)));
    });
  }

  return {
    get size() {
      return sockets.size;
    },
    deliverRelayed(connectionId, frame) {
      if (connectionId.startsWith(`${prefix}.`)) deliver(connectionId, frame);
    },
    async close() {
      server.off("upgrade", onUpgrade);
      for (const ws of sockets.values()) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      while (work.size > 0) await Promise.allSettled([...work]);
      broker.channel.attach(undefined);
      broker.channel.close();
    },
  };
}

/**
 * Answers an upgrade refused and closes its socket once the answer is written: the socket has left HTTP's
 * connections, so the server's close cannot reach it, and a client that never closes its side would hold it.
 */
function refuseUpgrade(socket: Duplex, answer: string): void {
  socket.once("finish", () => socket.destroy());
  socket.end(answer);
}
