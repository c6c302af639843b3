/**
 * @module The SDK's HTTP transport: JSON (or a binary batch, lib/protocol/binary-batch.ts) over kept-alive,
 * pooled connections (http-connections.ts) with a timeout, API errors (`{code, message}`) turned back into
 * `NimbusError`s with the same code, and several endpoints tried in turn when one is down.
 * With `iam`, every request is signed with SigV4 for a stage behind API Gateway's IAM auth (docs/deploy.md).
 *
 * @example
 * const transport = new HttpTransport({
 *   endpoints: "https://abc123.execute-api.us-east-1.amazonaws.com",
 *   iam: { region: "us-east-1", credentials: { accessKeyId, secretAccessKey, sessionToken } },
 * });
 * const api = new NimbusApi(transport);
 */
import { ErrorCode, isNimbusError, isShedAnswer, NimbusError, SHED_MARK } from "../../core/errors.js";
import { type NimbusCredentials, signNimbusRequest } from "../../core/request-signing.js";
import { sleep } from "../../core/sleep.js";
import { isBatchMediaType } from "../../protocol/index.js";
import { type ConnectionOptions, HttpConnections, sharedConnections } from "./http-connections.js";
import { type Credentials, type CredentialsProvider, signRequest } from "./sigv4.js";

export type { Credentials, CredentialsProvider, NimbusCredentials };

/** SigV4 signing of every request, for a stage with IAM auth. */
export interface IamAuth {
  /** The stage's region (the `region` output of `sst deploy`). */
  region: string;
  /**
   * Fixed keys, or a provider called before each request (and so expected to cache, refreshing temporary
   * credentials before they expire). A provider that throws fails the request with NO_PERMISSION.
   */
  credentials: Credentials | CredentialsProvider;
  /** Default `execute-api` (API Gateway). */
  service?: string;
}

export interface TransportOptions {
  /** Name server / API base URLs, e.g. `http://127.0.0.1:9876`. */
  endpoints: string | string[];
  /** Per-request timeout. Default 3000 ms (RocketMQ's sendMsgTimeout). */
  timeoutMs?: number | undefined;
  /** Extra headers on every request (e.g. auth). */
  headers?: Record<string, string> | undefined;
  /** Sign every request with AWS SigV4 (API Gateway IAM auth). Its `authorization` replaces any in `headers`. */
  iam?: IamAuth | undefined;
  /**
   * A Nimbus user's access key and secret key (a stage or `nimbus dev --auth` with ACLs): every request is
   * signed with them (docs/security.md); the secret never leaves this process.
   */
  credentials?: NimbusCredentials | undefined;
  /**
   * Sends and pulls as binary batches (`application/vnd.nimbus.batch`: no JSON or base64 for bodies).
   * Default true; false keeps JSON everywhere.
   */
  binaryBatches?: boolean | undefined;
  /** Its own connection pool (default: the process's shared one, 32 connections per origin, pipelining 4). */
  connections?: ConnectionOptions | undefined;
  /**
   * Times a request refused before anything of it ran (SYSTEM_BUSY from the broker's load shedder, a gateway's
   * 429) is sent again, after a jittered, doubling pause (first up to 100 ms), within `timeoutMs`. Default 2; 0 off.
   */
  shedRetries?: number | undefined;
}

/** The first pause before a shed request is sent again is up to this long (jittered), the next twice as long. */
const SHED_BACKOFF_MS = 100;
/** Bounded: a caller asking for more still gets at most this many. */
const MAX_SHED_RETRIES = 5;

export interface RequestOptions {
  timeoutMs?: number | undefined;
  /** Send to this base URL (a broker address from a route) instead of the endpoints. */
  baseUrl?: string | undefined;
  /** The body is these bytes of this type (a binary batch), sent as they are. */
  contentType?: string | undefined;
  /** Ask for this answer type (a binary batch's comes back as its bytes, a `Uint8Array`). */
  accept?: string | undefined;
  /** Safe to pipeline and replay (a read): GETs always are. */
  idempotent?: boolean | undefined;
}

type Signing = Required<Pick<IamAuth, "region" | "service">> & { credentials: Credentials };

const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));

export class HttpTransport {
  readonly endpoints: string[];
  readonly timeoutMs: number;
  readonly #headers: Record<string, string>;
  readonly #iam: IamAuth | undefined;
  readonly #credentials: NimbusCredentials | undefined;
  readonly #connections: HttpConnections;
  /** Whether the pool is this transport's own (`connections` given), closed by `close()`. */
  readonly #ownsConnections: boolean;
  /** Sends and pulls go as binary batches. */
  readonly binaryBatches: boolean;
  readonly shedRetries: number;
  #next = 0;

  constructor(options: TransportOptions) {
    const list = Array.isArray(options.endpoints) ? options.endpoints : options.endpoints.split(";");
    this.endpoints = list.map((e) => e.trim().replace(/\/+$/, "")).filter((e) => e.length > 0);
    if (this.endpoints.length === 0)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "at least one endpoint is needed");
    this.timeoutMs = options.timeoutMs ?? 3000;
    this.#headers = { "content-type": "application/json", ...(options.headers ?? {}) };
    this.#iam = options.iam;
    this.#credentials = options.credentials;
    if (this.#iam && this.#credentials)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "sign with either iam or credentials, not both");
    this.binaryBatches = options.binaryBatches ?? true;
    this.shedRetries = Math.max(0, Math.min(MAX_SHED_RETRIES, Math.trunc(options.shedRetries ?? 2)));
    this.#ownsConnections = options.connections !== undefined;
    this.#connections = options.connections
      ? new HttpConnections({ connectTimeoutMs: this.timeoutMs, ...options.connections })
      : sharedConnections();
  }

  /**
   * Closes this transport's own pool (`connections` given; requests in flight finish first); the process's
   * shared pool stays open for other clients (its idle connections never keep the process alive).
   */
  async close(): Promise<void> {
    if (this.#ownsConnections) await this.#connections.close();
  }

  /**
   * One request. A network failure or timeout on one endpoint moves on to the next (each tried once);
   * an answer from the API (even an error) is final, but for a refusal made before anything of the request
   * ran (`isShedAnswer`), which is sent again up to `shedRetries` times after a jittered backoff, as
   * RocketMQ's clients back off a broker in flow control.
   */
  async request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const deadline = Date.now() + (options.timeoutMs ?? this.timeoutMs);
    for (let retry = 0; ; retry++) {
      try {
        // One deadline for the request, its attempts included.
        const left = retry === 0 ? options : { ...options, timeoutMs: deadline - Date.now() };
        return await this.#requestOnce<T>(method, path, body, left);
      } catch (err) {
        const pause = Math.round(SHED_BACKOFF_MS * 2 ** retry * (0.5 + Math.random() / 2));
        if (!isShedAnswer(err) || retry >= this.shedRetries || Date.now() + pause >= deadline) throw err;
        await sleep(pause);
      }
    }
  }

  async #requestOnce<T>(method: string, path: string, body: unknown, options: RequestOptions): Promise<T> {
    const bases = options.baseUrl ? [options.baseUrl.replace(/\/+$/, "")] : this.#rotation();
    const signing = await this.#signing();
    let lastError: unknown;
    for (const base of bases) {
      try {
        return await this.#once<T>(method, base + path, body, options, signing);
      } catch (err) {
        if (isNimbusError(err) && !err.retryable) throw err;
        lastError = err;
      }
    }
    throw lastError;
  }

  /**
   * The headers of a GET to `url` as this transport would send it (signed with `iam`): what the push
   * channel's WebSocket connect carries, so it authenticates like every HTTP request (docs/push-channel.md).
   */
  async connectHeaders(url: string): Promise<Record<string, string>> {
    const signing = await this.#signing();
    const { "content-type": _json, ...headers } = this.#headers;
    const httpUrl = url.replace(/^ws/, "http");
    // A deployment with ACLs: the connect request is signed as every HTTP request (docs/push-channel.md).
    const nimbus = this.#credentials;
    if (!signing && nimbus)
      return withSignature(headers, signNimbusRequest({ method: "GET", url: httpUrl, headers, credentials: nimbus }));
    if (!signing) return headers;
    const signed = { ...signing, region: regionOfApiUrl(httpUrl) ?? signing.region };
    return withSignature(headers, signRequest({ ...signed, method: "GET", url: httpUrl, headers }));
  }

  #rotation(): string[] {
    const start = this.#next++ % this.endpoints.length;
    return [...this.endpoints.slice(start), ...this.endpoints.slice(0, start)];
  }

  /** What signs one request (credentials asked for once, for all its endpoints); undefined without `iam`. */
  async #signing(): Promise<Signing | undefined> {
    if (!this.#iam) return undefined;
    const { region, service = "execute-api", credentials: source } = this.#iam;
    if (typeof source !== "function") return { region, service, credentials: source };
    try {
      return { region, service, credentials: await source() };
    } catch (err) {
      throw new NimbusError(ErrorCode.NO_PERMISSION, `no AWS credentials to sign with: ${String(err)}`, { cause: err });
    }
  }

  async #once<T>(
    method: string,
    url: string,
    body: unknown,
    options: RequestOptions,
    signing: Signing | undefined,
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    // Serialized once: the signature covers these exact bytes.
    const payload = body === undefined ? undefined : body instanceof Uint8Array ? body : JSON.stringify(body);
    const plain =
      options.contentType || options.accept
        ? {
            ...this.#headers,
            ...(options.contentType ? { "content-type": options.contentType } : {}),
            ...(options.accept ? { accept: options.accept } : {}),
          }
        : this.#headers;
    // A broker in another region (a slave cell's API) is signed for its own region.
    const signed = signing && { ...signing, region: regionOfApiUrl(url) ?? signing.region };
    const nimbus = this.#credentials;
    const headers = signed
      ? withSignature(plain, signRequest({ ...signed, method, url, headers: plain, body: payload }))
      : nimbus
        ? withSignature(plain, signNimbusRequest({ method, url, headers: plain, body: payload, credentials: nimbus }))
        : plain;
    let res: { ok: boolean; status: number; contentType: string | undefined; body: Uint8Array };
    try {
      const reply = await this.#connections.exchange({
        method,
        url,
        headers,
        body: payload,
        timeoutMs,
        idempotent: method === "GET" || options.idempotent === true,
      });
      res = { ...reply, ok: reply.status >= 200 && reply.status < 300 };
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new NimbusError(ErrorCode.SYSTEM_BUSY, `${method} ${url} ${detail}`, { cause: err });
    }
    if (res.ok && isBatchMediaType(res.contentType)) return res.body as T;
    const text = Buffer.from(res.body.buffer, res.body.byteOffset, res.body.byteLength).toString("utf8");
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      throw new NimbusError(ErrorCode.SYSTEM_ERROR, `${method} ${url}: answer ${res.status} is not JSON`);
    }
    if (res.ok) return parsed as T;
    // API Gateway's own refusals say `message`, or `Message` for an IAM policy's deny.
    const { code, message, Message } = (parsed ?? {}) as { code?: string; message?: string; Message?: string };
    const description = message ?? Message ?? `${method} ${url} answered ${res.status}`;
    if (typeof code === "string" && KNOWN_CODES.has(code)) throw new NimbusError(code as ErrorCode, description);
    // A gateway's throttling refused it before any function ran: shed, safe to send again.
    if (res.status === 429) throw new NimbusError(ErrorCode.SYSTEM_BUSY, `${SHED_MARK} throttled: ${description}`);
    // No answer of ours: API Gateway's, in front of a broker that is down (502, 503, 504) counts as no answer.
    const gatewayDown = res.status === 502 || res.status === 503 || res.status === 504;
    throw new NimbusError(codeOfStatus(res.status), description, gatewayDown ? { cause: UNREACHABLE } : {});
  }
}

/** The cause of an error that no broker answered. */
const UNREACHABLE = Symbol("unreachable");

/**
 * True when no broker answered: a network failure, a timeout, or API Gateway's 502/503/504 in front of one;
 * as opposed to a broker's own answer, even a busy one.
 */
export function isUnreachable(err: unknown): boolean {
  return isNimbusError(err, ErrorCode.SYSTEM_BUSY) && err.cause !== undefined;
}

/** The region of an API Gateway URL (`https://abc.execute-api.us-west-2.amazonaws.com`), if it is one. */
export function regionOfApiUrl(url: string): string | undefined {
  return /^https:\/\/[^/]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:[/:]|$)/.exec(url)?.[1];
}

/** `headers` with the signature's headers, any of the same name (`Authorization`, ...) replaced. */
function withSignature(headers: Record<string, string>, signature: Record<string, string>): Record<string, string> {
  const kept = Object.entries(headers).filter(([name]) => !(name.toLowerCase() in signature));
  return { ...Object.fromEntries(kept), ...signature };
}

/**
 * A status without one of our codes (e.g. API Gateway's own): throttling and outages are retryable; 401 and
 * 403 (IAM auth refused: no or a bad signature, a clock off by more than 5 minutes) are NO_PERMISSION.
 */
function codeOfStatus(status: number): ErrorCode {
  if (status === 429 || status === 502 || status === 503 || status === 504) return ErrorCode.SYSTEM_BUSY;
  if (status === 401 || status === 403) return ErrorCode.NO_PERMISSION;
  return status >= 500 ? ErrorCode.SYSTEM_ERROR : ErrorCode.PARAMETER_ILLEGAL;
}
