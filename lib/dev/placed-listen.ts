/**
 * @module A worker's listening ports when the primary places connections (`--workers N`: docs/design.md "Every
 * core"). Node's cluster hands each new connection to the next worker in turn; the primary of `nimbus dev` and
 * `nimbus proxy` instead listens itself and hands each to the worker with the fewest open connections, the first
 * worker on a tie (lib/cli/connection-placement.ts). A worker's `listenServer` asks the primary to listen for it,
 * then serves the sockets the primary hands it as connections of its own server (the HTTP server's sniffing, TLS and
 * upgrades run as for any connection), and tells the primary when they close. Outside such a worker it is
 * `server.listen`.
 */
import cluster from "node:cluster";
import type { AddressInfo, Server, Socket } from "node:net";

/** The environment variable a primary that places connections sets for its workers. */
export const PLACED_ENV = "NIMBUS_PLACED_CONNECTIONS";

/** Where a server listens. */
export interface ListenAt {
  port: number;
  host: string;
  backlog?: number | undefined;
}

/** What a worker and its primary say about placed ports (over the cluster's IPC channel). */
export type PlacementMessage =
  | { t: "placement.listen"; key: string; port: number; host: string; backlog?: number | undefined }
  | { t: "placement.listening"; key: string; port: number; code?: string | undefined; error?: string | undefined }
  | { t: "placement.unlisten"; key: string }
  | { t: "placement.conn"; key: string }
  | { t: "placement.closed"; n: number };

const KINDS = new Set([
  "placement.listen",
  "placement.listening",
  "placement.unlisten",
  "placement.conn",
  "placement.closed",
]);

export const isPlacementMessage = (m: unknown): m is PlacementMessage =>
  typeof m === "object" && m !== null && KINDS.has((m as { t?: unknown }).t as string);

/** Whether this process is a worker whose primary places its connections. */
const connectionsPlaced = (): boolean => cluster.isWorker && process.env[PLACED_ENV] === "1";

/**
 * Listens `server` at `at` and answers the port it listens on: in a worker whose primary places connections, through
 * the primary (a taken port rejects with the primary's EADDRINUSE, as `server.listen` would); else itself.
 */
export function listenServer(server: Server, at: ListenAt): Promise<number> {
  if (connectionsPlaced()) return worker().listen(server, at);
  return new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: at.port, host: at.host, ...(at.backlog !== undefined && { backlog: at.backlog }) }, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** This worker's end: its servers by key, the listens awaiting the primary, the closes not yet told. */
class PlacedWorker {
  readonly #servers = new Map<string, Server>();
  readonly #awaiting = new Map<string, { resolve: (port: number) => void; reject: (err: Error) => void }>();
  /** Listens so far per host and port: the nth listen of a port (0: any free one) shares the primary's nth. */
  readonly #listens = new Map<string, number>();
  #closed = 0;
  #telling = false;

  constructor() {
    process.on("message", (m: unknown, handle: unknown) => {
      if (isPlacementMessage(m)) this.#heard(m, handle as Socket | undefined);
    });
  }

  listen(server: Server, at: ListenAt): Promise<number> {
    const where = `${at.host}|${at.port}`;
    const nth = this.#listens.get(where) ?? 0;
    this.#listens.set(where, nth + 1);
    const key = `${where}|${nth}`;
    return new Promise<number>((resolve, reject) => {
      this.#awaiting.set(key, {
        resolve: (port) => {
          this.#servers.set(key, server);
          servedThroughPrimary(server, () => {
            if (this.#servers.delete(key)) this.#send({ t: "placement.unlisten", key });
          });
          // It listens (through the primary) until its close is called, as for its own listen.
          Object.defineProperty(server, "listening", { configurable: true, get: () => this.#servers.has(key) });
          // HTTP's server starts tracking its connections (for its timeouts and closeAllConnections) on listening.
          server.emit("listening");
          resolve(port);
        },
        reject,
      });
      this.#send({ t: "placement.listen", key, port: at.port, host: at.host, backlog: at.backlog });
    });
  }

  #heard(m: PlacementMessage, handle: Socket | undefined): void {
    if (m.t === "placement.listening") {
      const waiting = this.#awaiting.get(m.key);
      this.#awaiting.delete(m.key);
      if (m.error === undefined) waiting?.resolve(m.port);
      else waiting?.reject(Object.assign(new Error(m.error), { code: m.code }));
    } else if (m.t === "placement.conn") {
      // A connection the primary counted but whose socket did not come (it had closed meanwhile) is uncounted.
      if (handle === undefined) {
        this.#closedOne();
        return;
      }
      handle.once("close", () => this.#closedOne());
      const server = this.#servers.get(m.key);
      if (server === undefined) handle.destroy();
      else server.emit("connection", adopted(server, handle));
    }
  }

  /** Closes are told in one message per turn of the event loop. */
  #closedOne(): void {
    this.#closed++;
    if (this.#telling) return;
    this.#telling = true;
    setImmediate(() => {
      this.#telling = false;
      const n = this.#closed;
      this.#closed = 0;
      this.#send({ t: "placement.closed", n });
    });
  }

  #send(m: PlacementMessage): void {
    if (process.connected) process.send?.(m);
  }
}

/**
 * A server that never listens itself, as one that does: its close (`stopped` first) no longer errs for not running,
 * and it emits `close` once, when closed and drained: a handed connection's end would otherwise emit it at every
 * drain, as Node's sockets tell their server when they close (`_emitCloseIfDrained`).
 */
function servedThroughPrimary(server: Server, stopped: () => void): void {
  const own = server as Server & { _emitCloseIfDrained: () => void };
  const emitCloseIfDrained = own._emitCloseIfDrained.bind(server);
  let closing = false;
  own._emitCloseIfDrained = () => {
    if (closing) emitCloseIfDrained();
  };
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    closing = true;
    stopped();
    return close(callback && (() => callback()));
  };
}

/** A server's and a socket's fields Node's own accept path sets (lib/net.js `onconnection`). */
type AcceptingServer = Server & {
  allowHalfOpen?: boolean;
  noDelay?: boolean;
  keepAlive?: boolean;
  /** In seconds (`setKeepAlive` takes ms). */
  keepAliveInitialDelay?: number;
  _connections: number;
};
type AcceptedSocket = Socket & { server?: Server; _server?: Server };

/**
 * The socket set as the server's own accepted ones are (Node's `onconnection`): half-open, no-delay and keep-alive
 * as the server says, and counted as its connection (its close waits for it; the socket's close uncounts it).
 */
function adopted(server: Server, socket: Socket): Socket {
  const own = server as AcceptingServer;
  const accepted = socket as AcceptedSocket;
  socket.allowHalfOpen = own.allowHalfOpen === true;
  if (own.noDelay === true) socket.setNoDelay(true);
  if (own.keepAlive === true) socket.setKeepAlive(true, (own.keepAliveInitialDelay ?? 0) * 1000);
  own._connections++;
  accepted.server = server;
  accepted._server = server;
  return socket;
}

let placedWorker: PlacedWorker | undefined;
const worker = (): PlacedWorker => {
  placedWorker ??= new PlacedWorker();
  return placedWorker;
};
