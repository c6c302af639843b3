/**
 * @module The SDK's HTTP transport: JSON over `fetch` with a timeout, API errors (`{code, message}`)
 * turned back into `NimbusError`s with the same code, and several endpoints tried in turn when one is down.
 */
import { ErrorCode, isNimbusError, NimbusError } from "../core/errors.js";

export interface TransportOptions {
  /** Name server / API base URLs, e.g. `http://127.0.0.1:9876`. */
  endpoints: string | string[];
  /** Per-request timeout. Default 3000 ms (RocketMQ's sendMsgTimeout). */
  timeoutMs?: number;
  /** Extra headers on every request (e.g. auth). */
  headers?: Record<string, string>;
}

export interface RequestOptions {
  timeoutMs?: number;
  /** Send to this base URL (a broker address from a route) instead of the endpoints. */
  baseUrl?: string;
}

const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));

export class HttpTransport {
  readonly endpoints: string[];
  readonly timeoutMs: number;
  readonly #headers: Record<string, string>;
  #next = 0;

  constructor(options: TransportOptions) {
    const list = Array.isArray(options.endpoints) ? options.endpoints : options.endpoints.split(";");
    this.endpoints = list.map((e) => e.trim().replace(/\/+$/, "")).filter((e) => e.length > 0);
    if (this.endpoints.length === 0)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "at least one endpoint is needed");
    this.timeoutMs = options.timeoutMs ?? 3000;
    this.#headers = { "content-type": "application/json", ...(options.headers ?? {}) };
  }

  /**
   * One request. A network failure or timeout on one endpoint moves on to the next (each tried once);
   * an answer from the API (even an error) is final.
   */
  async request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const bases = options.baseUrl ? [options.baseUrl.replace(/\/+$/, "")] : this.#rotation();
    let lastError: unknown;
    for (const base of bases) {
      try {
        return await this.#once<T>(method, base + path, body, options.timeoutMs ?? this.timeoutMs);
      } catch (err) {
        if (isNimbusError(err) && !err.retryable) throw err;
        lastError = err;
      }
    }
    throw lastError;
  }

  #rotation(): string[] {
    const start = this.#next++ % this.endpoints.length;
    return [...this.endpoints.slice(start), ...this.endpoints.slice(0, start)];
  }

  async #once<T>(method: string, url: string, body: unknown, timeoutMs: number): Promise<T> {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: this.#headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      throw new NimbusError(
        ErrorCode.SYSTEM_BUSY,
        timedOut ? `${method} ${url} timed out after ${timeoutMs} ms` : `${method} ${url} failed: ${String(err)}`,
        { cause: err },
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      throw new NimbusError(ErrorCode.SYSTEM_ERROR, `${method} ${url}: answer ${res.status} is not JSON`);
    }
    if (res.ok) return parsed as T;
    const { code, message } = (parsed ?? {}) as { code?: string; message?: string };
    const known = typeof code === "string" && KNOWN_CODES.has(code) ? (code as ErrorCode) : codeOfStatus(res.status);
    throw new NimbusError(known, message ?? `${method} ${url} answered ${res.status}`);
  }
}

/** A status without one of our codes (e.g. API Gateway's own 429 or 503): throttling and outages are retryable. */
function codeOfStatus(status: number): ErrorCode {
  if (status === 429 || status === 502 || status === 503 || status === 504) return ErrorCode.SYSTEM_BUSY;
  return status >= 500 ? ErrorCode.SYSTEM_ERROR : ErrorCode.PARAMETER_ILLEGAL;
}
