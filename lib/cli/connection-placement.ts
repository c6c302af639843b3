/**
 * @module The primary's end of placed connections (`--workers N`: docs/design.md "Every core"). Node's cluster
 * hands each new connection to the next worker in turn, so an idle broker's successive clients land on a different
 * worker each, whose code is cold for what they do, and long-lived connections pile unevenly after churn. Here the
 * primary listens for its workers (they ask: lib/dev/placed-listen.ts) and hands each new connection to the worker
 * with the fewest open connections on every placed port, the first worker on a tie: one client at a time stays on
 * the first worker, and many spread evenly. The workers tell it when their connections close. gRPC's port is
 * listened by grpc-js, which Node's cluster still shares in turn.
 */
import type { Worker } from "node:cluster";
import { createServer, type Server, type Socket } from "node:net";
import type { PlacementMessage } from "../dev/placed-listen.js";

/** Open connections per worker, and the choice of the least loaded: the first of the fewest. */
export class LeastConnections<W> {
  readonly #open = new Map<W, number>();

  /** A worker that may get connections, after those added before it (ties go to the first added). */
  add(worker: W): void {
    if (!this.#open.has(worker)) this.#open.set(worker, 0);
  }

  remove(worker: W): void {
    this.#open.delete(worker);
  }

  /** The first worker with the fewest open connections among `among`, counted as having one more. */
  place(among: ReadonlySet<W>): W | undefined {
    let best: W | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    for (const [worker, open] of this.#open) {
      if (open < fewest && among.has(worker)) {
        best = worker;
        fewest = open;
      }
    }
    if (best !== undefined) this.#open.set(best, fewest + 1);
    return best;
  }

  /** `n` of the worker's connections closed (or never reached it). */
  closed(worker: W, n: number): void {
    const open = this.#open.get(worker);
    if (open !== undefined) this.#open.set(worker, Math.max(0, open - n));
  }

  openOf(worker: W): number | undefined {
    return this.#open.get(worker);
  }
}

/** One placed port: the primary's server and the workers serving it. */
interface PlacedPort {
  server: Server;
  /** The workers that listen on it (a worker's `listen` answered); until the first, connections wait in the kernel. */
  workers: Set<Worker>;
  /** Listens asked and not answered yet: the port stays open for them. */
  asking: number;
  /** The listen under way, then its outcome: the port, or why it failed. */
  listening: Promise<{ port: number } | { code: string | undefined; error: string }>;
}

/** The primary's placed ports and its workers' open connections. */
export class ConnectionPlacement {
  readonly #load = new LeastConnections<Worker>();
  readonly #ports = new Map<string, PlacedPort>();
  #closed = false;

  /** A forked worker, in the order of the tie-break. */
  add(worker: Worker): void {
    this.#load.add(worker);
  }

  /** A worker gone: it gets no more connections; a port none of them serves any more is closed. */
  remove(worker: Worker): void {
    this.#load.remove(worker);
    for (const [key, placed] of this.#ports) this.#leave(key, placed, worker);
  }

  /** What a worker said: it listens, no longer listens, or some of its connections closed. */
  heard(worker: Worker, m: PlacementMessage): void {
    if (m.t === "placement.closed") this.#load.closed(worker, m.n);
    else if (m.t === "placement.listen") void this.#listen(worker, m);
    else if (m.t === "placement.unlisten") {
      const placed = this.#ports.get(m.key);
      if (placed !== undefined) this.#leave(m.key, placed, worker);
    }
  }

  /** Closes every placed port (the primary stops); a listen asked later is refused. */
  close(): void {
    this.#closed = true;
    for (const placed of this.#ports.values()) placed.server.close();
    this.#ports.clear();
  }

  async #listen(worker: Worker, m: Extract<PlacementMessage, { t: "placement.listen" }>): Promise<void> {
    if (this.#closed) {
      tell(worker, { t: "placement.listening", key: m.key, port: m.port, error: "the primary is stopping" });
      return;
    }
    let placed = this.#ports.get(m.key);
    if (placed === undefined) {
      // Paused: the first bytes wait in the kernel until the chosen worker reads them.
      const server = createServer({ pauseOnConnect: true }, (socket) => this.#hand(m.key, socket));
      placed = { server, workers: new Set(), asking: 0, listening: listenedOutcome(server, m) };
      this.#ports.set(m.key, placed);
    }
    placed.asking++;
    const outcome = await placed.listening;
    placed.asking--;
    if (worker.isDead() || this.#closed) {
      // Gone (or stopping) while the listen was under way: told so if it can hear, and a port nobody serves closed.
      tell(worker, { t: "placement.listening", key: m.key, port: m.port, error: "the primary is stopping" });
      this.#leave(m.key, placed, worker);
    } else if ("port" in outcome) {
      placed.workers.add(worker);
      tell(worker, { t: "placement.listening", key: m.key, port: outcome.port });
    } else {
      if (this.#ports.get(m.key) === placed) this.#ports.delete(m.key);
      tell(worker, { t: "placement.listening", key: m.key, port: m.port, code: outcome.code, error: outcome.error });
    }
  }

  #hand(key: string, socket: Socket): void {
    const placed = this.#ports.get(key);
    const worker = placed && this.#load.place(placed.workers);
    if (worker === undefined || !worker.isConnected()) {
      if (worker !== undefined) this.#load.closed(worker, 1);
      socket.destroy();
      return;
    }
    // Sent, the primary's copy of the socket is closed; one the worker never got is not counted for it.
    worker.send({ t: "placement.conn", key } satisfies PlacementMessage, socket, (err: Error | null) => {
      if (err === null) return;
      this.#load.closed(worker, 1);
      socket.destroy();
    });
  }

  #leave(key: string, placed: PlacedPort, worker: Worker): void {
    placed.workers.delete(worker);
    if (placed.workers.size > 0 || placed.asking > 0) return;
    placed.server.close();
    if (this.#ports.get(key) === placed) this.#ports.delete(key);
  }
}

/**
 * Listens `server` as the worker asked: its port, or why not (EADDRINUSE and the like, also thrown at once for a bad
 * port). Once listening, later errors are accept errors (a full file table: EMFILE): skipped, as Node's cluster
 * does, the first of them logged.
 */
function listenedOutcome(
  server: Server,
  m: Extract<PlacementMessage, { t: "placement.listen" }>,
): Promise<{ port: number } | { code: string | undefined; error: string }> {
  return new Promise((resolve) => {
    const failed = (err: NodeJS.ErrnoException) => resolve({ code: err.code, error: err.message });
    server.once("error", failed);
    // Closed before it listened (the primary stops): the listen never answers, this does.
    server.once("close", () => resolve({ code: undefined, error: "closed before it listened" }));
    try {
      server.listen({ port: m.port, host: m.host, ...(m.backlog !== undefined && { backlog: m.backlog }) }, () => {
        server.off("error", failed);
        let acceptErrors = 0;
        server.on("error", (err) => {
          if (acceptErrors++ === 0) console.error(`nimbus: accepting on ${m.host}:${m.port}: ${err.message}`);
        });
        const address = server.address();
        resolve({ port: address !== null && typeof address === "object" ? address.port : m.port });
      });
    } catch (err) {
      failed(err as NodeJS.ErrnoException);
    }
  });
}

const tell = (worker: Worker, m: PlacementMessage): void => {
  if (worker.isConnected()) worker.send(m);
};
