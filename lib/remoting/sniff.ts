/**
 * @module One port, two protocols: the HTTP server's connections are looked at before HTTP sees them. A remoting
 * frame starts with its big-endian length, whose first byte is 0 (frames are far below 16 MiB); an HTTP request
 * starts with an ASCII method, and a TLS handshake with 0x16. The first bytes read are put back (`unshift`) before
 * the connection goes to HTTP, or handed to the remoting door with the connection. On an HTTPS server the same is
 * done after the TLS handshake, on the decrypted stream (`secureConnection`): RocketMQ's clients with
 * `tls.enable` open TLS first, then send frames, so one port serves HTTPS and remoting over TLS. Bounded:
 * connections waiting for their first byte (past `MAX_UNDECIDED_CONNECTIONS` the one waiting longest is closed)
 * and their wait. A server that has stopped listening takes no connection: one still waiting for its first byte
 * is closed, never handed to either protocol (HTTP's `closeAllConnections` has already run by then, so a client
 * that kept using it held the server's close open without end).
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";

/** How long a new connection may stay silent before its first byte; then it goes to HTTP (which times it out). */
const FIRST_BYTE_TIMEOUT_MS = 10_000;

/**
 * Connections waiting for their first byte at once, at most. Clients write as soon as they connect, so past it
 * the one silent longest is closed to make room: a flood of connections that send nothing holds this many
 * sockets, and whoever writes still gets through.
 */
export const MAX_UNDECIDED_CONNECTIONS = 2048;

/** What a sniffing server tells of its connections not yet given to either protocol. */
export interface Sniffing {
  /** Connections waiting for their first byte now (on an HTTPS server, and those still in their TLS handshake). */
  readonly undecided: number;
  /**
   * Closes the connections waiting for their first byte, and on an HTTPS server those still in their TLS handshake
   * (the server is closing: neither protocol gets them). Answers how many it closed.
   */
  closeUndecided(): number;
}

type ConnectionListener = (socket: Socket) => void;

/** How a server's connections are looked at. */
export interface SniffOptions {
  /** "secureConnection" for an HTTPS server (its HTTP handling listens there, on the decrypted connections). */
  event?: "connection" | "secureConnection" | undefined;
  /** How long a new connection may stay silent before it goes to HTTP (default 10 s). */
  firstByteTimeoutMs?: number | undefined;
}

/**
 * Puts `remoting` in front of `server`'s connection handling: a connection whose first byte is 0 is given to it
 * (`remoting` answers false when it cannot take connections now: the connection is closed).
 */
export function sniffRemoting(
  server: Server,
  remoting: (socket: Socket, first: Buffer) => boolean,
  options: SniffOptions = {},
): Sniffing {
  const event = options.event ?? "connection";
  const firstByteTimeoutMs = options.firstByteTimeoutMs ?? FIRST_BYTE_TIMEOUT_MS;
  const undecided = new Set<Socket>();
  const listeners = server.listeners(event) as ConnectionListener[];
  server.removeAllListeners(event);
  const toHttp = (socket: Socket) => {
    for (const listener of listeners) listener.call(server, socket);
  };
  // On an HTTPS server, the connections still in their TLS handshake, by their peer's address (the decrypted
  // connection has the same): closed with the undecided ones, so a stalled handshake does not hold the server's
  // close for TLS's handshake timeout (120 s). At most MAX_UNDECIDED_CONNECTIONS are tracked; one past it is not
  // (never closed to make room: it is served as any other), and at close waits for that timeout.
  const handshaking = new Map<string, Socket>();
  const peerOf = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;
  if (event === "secureConnection") {
    server.on("connection", (raw: Socket) => {
      if (handshaking.size >= MAX_UNDECIDED_CONNECTIONS) return;
      const peer = peerOf(raw);
      handshaking.set(peer, raw);
      raw.once("close", () => {
        if (handshaking.get(peer) === raw) handshaking.delete(peer);
      });
    });
  }
  server.on(event, (socket: Socket) => {
    if (handshaking.size > 0) handshaking.delete(peerOf(socket));
    if (undecided.size >= MAX_UNDECIDED_CONNECTIONS) {
      const [oldest] = undecided;
      undecided.delete(oldest as Socket);
      oldest?.destroy();
    }
    undecided.add(socket);
    let decided = false;
    const decide = (first: Buffer | undefined) => {
      if (decided) return;
      decided = true;
      undecided.delete(socket);
      socket.off("readable", onReadable);
      socket.off("end", onEnd);
      clearTimeout(timer);
      if (!server.listening) {
        socket.destroy();
        return;
      }
      if (first !== undefined && first.byteLength > 0 && first[0] === 0) {
        if (!remoting(socket, first)) socket.destroy();
        socket.resume();
        return;
      }
      if (first !== undefined) socket.unshift(first);
      toHttp(socket);
    };
    const onReadable = () => {
      const first = socket.read() as Buffer | null;
      if (first !== null) decide(first);
    };
    const onEnd = () => decide(undefined);
    const timer = setTimeout(() => decide(undefined), firstByteTimeoutMs);
    socket.on("readable", onReadable);
    socket.once("end", onEnd);
    socket.once("close", () => {
      clearTimeout(timer);
      undecided.delete(socket);
    });
  });
  return {
    get undecided() {
      return undecided.size + handshaking.size;
    },
    closeUndecided() {
      const closing = [...undecided, ...handshaking.values()];
      undecided.clear();
      handshaking.clear();
      for (const socket of closing) socket.destroy();
      return closing.length;
    },
  };
}
