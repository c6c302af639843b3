/**
 * @module The SDK's connections: one undici `Agent` (a keep-alive pool per origin) shared by every client
 * of the process, instead of `fetch`'s per-call overhead. Requests reuse open connections; idempotent
 * ones (GETs, pulls) may be pipelined up to `pipelining` deep on one connection, while a send (not
 * idempotent) waits for a connection of its own, so a lost connection never leaves a send's fate to a
 * replay. Idle connections close after `keepAliveTimeoutMs` (or earlier, when the server's
 * `keep-alive: timeout` says so) and never keep the process alive.
 */
import { Agent } from "undici";

export interface ConnectionOptions {
  /** Connections per origin. Default 32. */
  connections?: number;
  /** Idempotent requests in flight on one connection. Default 4; 1 turns pipelining off. */
  pipelining?: number;
  /** Close a connection idle this long. Default 4000 ms (under Node's server default of 5 s). */
  keepAliveTimeoutMs?: number;
  /**
   * Give up connecting after this long. Default 10 s; a request's own timeout ends its wait earlier (the
   * connection attempt goes on for the next request until then).
   */
  connectTimeoutMs?: number;
}

export interface HttpExchange {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  timeoutMs: number;
  /** Safe to pipeline and to replay on a connection that closed under it (GETs, pulls). */
  idempotent: boolean;
}

export interface HttpReply {
  status: number;
  contentType: string | undefined;
  body: Uint8Array;
}

/** A request that got no answer: timed out, or the connection failed. */
export class HttpExchangeError extends Error {
  override readonly name = "HttpExchangeError";

  constructor(
    message: string,
    readonly timedOut: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class HttpConnections {
  readonly #agent: Agent;

  constructor(options: ConnectionOptions = {}) {
    this.#agent = new Agent({
      connections: options.connections ?? 32,
      pipelining: options.pipelining ?? 4,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 4000,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    });
  }

  /**
   * One request and its answer within `x.timeoutMs`, all of it: waiting for a free connection, connecting,
   * sending, the answer's head and its whole body (one deadline, an `AbortSignal`). undici honours the
   * signal only once the request is dispatched, so the wait before that is raced against it here; a request
   * still queued then is dropped by undici when its turn comes (never sent).
   */
  async exchange(x: HttpExchange): Promise<HttpReply> {
    const url = new URL(x.url);
    const deadline = AbortSignal.timeout(x.timeoutMs);
    const expired = new Promise<never>((_, reject) => {
      deadline.addEventListener("abort", () => reject(deadline.reason), { once: true });
    });
    expired.catch(() => {}); // observed by the races below; unobserved when the answer comes first
    try {
      const pending = this.#agent.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: x.method as "GET",
        headers: x.headers,
        body: x.body ?? null,
        idempotent: x.idempotent,
        // undici holds the next request back until this one's answer head arrives unless told it will not
        // block (its default for every method but HEAD): without this, nothing is ever pipelined.
        blocking: !x.idempotent,
        signal: deadline,
      });
      pending.catch(() => {}); // its failure after the deadline is the deadline's
      const res = await Promise.race([pending, expired]);
      const body = new Uint8Array(await Promise.race([res.body.arrayBuffer(), expired]));
      const type = res.headers["content-type"];
      return { status: res.statusCode, contentType: Array.isArray(type) ? type[0] : type, body };
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      const timedOut =
        deadline.aborted ||
        code === "UND_ERR_HEADERS_TIMEOUT" ||
        code === "UND_ERR_BODY_TIMEOUT" ||
        code === "UND_ERR_CONNECT_TIMEOUT";
      throw new HttpExchangeError(timedOut ? `timed out after ${x.timeoutMs} ms` : `failed: ${String(err)}`, timedOut, {
        cause: err,
      });
    }
  }

  /** Closes the pool (requests in flight finish first). */
  close(): Promise<void> {
    return this.#agent.close();
  }
}

/** The process's shared pool: every transport without its own options uses it. */
let shared: HttpConnections | undefined;
export function sharedConnections(): HttpConnections {
  shared ??= new HttpConnections();
  return shared;
}
