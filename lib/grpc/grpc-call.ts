/**
 * @module One gRPC call on an HTTP/2 stream (the gRPC over HTTP/2 spec): its metadata and deadline from the
 * request headers, its length-prefixed request messages (identity, gzip or deflate) decoded by the method's
 * codec, its answers encoded, and its end as a `grpc-status` trailer. The calls of every kind (unary,
 * server-streaming, bidirectional) are this one object; the handlers in server.ts, consume.ts and
 * telemetry.ts use the part their kind needs.
 *
 * Events: `data` (each request message), `end` (the client's side ended), `cancelled` (reset by the client or
 * its connection lost before the server ended the call), `close` (the call is over, either way).
 */
import { EventEmitter } from "node:events";
import { gunzipSync, inflateSync } from "node:zlib";
import { OVER_BUDGET, type RequestBytes } from "../core/request-bytes.js";
import { encodeLiteralHeaders, encodeResponseHeaders, type RequestHeaders, type ServerStream } from "./http2/index.js";
import { type FramedMessage, MessageFrames, MessageTooLarge } from "./message-frames.js";

/** What a call's received bytes are held to: the process's budget, and the time a request has to arrive. */
export interface ReceiveLimits {
  budget?: RequestBytes | undefined;
  /**
   * A unary request must end, and a stream's message be whole, this long after its first byte came, or the call ends
   * DEADLINE_EXCEEDED and gives its bytes back (a client that stops half-way holds nothing for long). Default 30 s.
   */
  receiveMs?: number | undefined;
}

/** Default of `ReceiveLimits.receiveMs`: the HTTP door's time for a body to arrive. */
export const DEFAULT_RECEIVE_MS = 30_000;

/** gRPC's status codes this server answers with. */
export const GRPC_STATUS = {
  OK: 0,
  DEADLINE_EXCEEDED: 4,
  INVALID_ARGUMENT: 3,
  FAILED_PRECONDITION: 9,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
} as const;

/** A call's request headers, read as grpc-js' `Metadata` is: `-bin` values base64-decoded. */
export interface CallMetadata {
  get(name: string): readonly (string | Buffer)[];
}

/** The codec of one method (grpc-js' `ServiceDefinition` entries have these). */
export interface MethodCodec {
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(message: unknown): Buffer;
}

/** The longest server-side deadline kept: under 2^31 ms, what a Node timer holds; longer is none. */
export const MAX_SERVER_DEADLINE_MS = 2 ** 31 - 1;

const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** A `grpc-timeout` value in ms, or NaN when malformed. */
export function timeoutMs(value: string): number {
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  return m ? Number(m[1]) * (UNIT_MS[m[2] ?? ""] ?? Number.NaN) : Number.NaN;
}

/** `grpc-message`'s percent-encoding: bytes outside printable ASCII, and `%`, as %XX of their UTF-8. */
export function percentEncode(text: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(text)) return text;
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** A streaming call's messages (and their bytes) held at most before its handler listens. */
const MAX_HELD_MESSAGES = 64;
const MAX_HELD_BYTES = 1024 * 1024;

const RESPONSE_HEADERS = encodeResponseHeaders([
  ["content-type", "application/grpc"],
  ["grpc-accept-encoding", "identity,deflate,gzip"],
]);
const OK_TRAILERS = encodeLiteralHeaders([["grpc-status", "0"]]);

const statusPairs = (code: number, details: string): [string, string][] => [
  ["grpc-status", String(code)],
  ["grpc-message", percentEncode(details.slice(0, 1024))],
];

/** The headers of a response that is only a status (trailers-only). */
export function statusOnlyHeaders(code: number, details: string): Buffer {
  return encodeResponseHeaders([["content-type", "application/grpc"], ...statusPairs(code, details)]);
}

class Headers implements CallMetadata {
  constructor(private readonly headers: RequestHeaders) {}
  get(name: string): readonly (string | Buffer)[] {
    const values = this.headers.get(name);
    if (values === undefined) return [];
    return name.endsWith("-bin") ? values.map((v) => Buffer.from(v, "base64")) : values;
  }
}

export class GrpcCall extends EventEmitter {
  /** The request message of a unary or server-streaming call, once read. */
  request: unknown;
  readonly metadata: CallMetadata;
  cancelled = false;
  readonly #stream: ServerStream;
  readonly #codec: MethodCodec;
  readonly #maxMessageBytes: number;
  readonly #deadline: number;
  readonly #encoding: string;
  readonly #frames: MessageFrames;
  #heldBytes = 0;
  /**
   * Bytes received (and what compressed ones inflated by) counted against `budget`: a unary call's until it ends, a
   * stream's until they are a message handed on.
   */
  #budgeted = 0;
  /**
   * Of `#budgeted`, the bytes counted as still arriving, in the budget's share for them: a unary call's from the end of
   * a read that did not end it until the client ends it (its handler runs then), a stream's message until it is whole.
   */
  #arriving = 0;
  /** Set while a request (unary) or a message (stream) is arriving: its time to be whole. */
  #receiveTimer: NodeJS.Timeout | undefined;
  #ended = false;
  /** The client ended its side (END_STREAM): a unary request is whole. */
  #clientEnded = false;
  /** A unary request's bytes came in the read being handled: whether it is still arriving is checked after it. */
  #arrivingCheckDue = false;
  /** A streaming request's messages (and its end) held until a `data` listener takes them; unary: none. */
  readonly #held: unknown[] = [];
  #flowing: boolean;
  #endHeld = false;

  /** `streaming`: the client sends a stream of messages (`data` events) rather than one (`request`). */
  constructor(
    stream: ServerStream,
    headers: RequestHeaders,
    codec: MethodCodec,
    maxMessageBytes: number,
    readonly streaming = false,
    private readonly limits: ReceiveLimits = {},
  ) {
    super();
    this.once("close", () => {
      clearTimeout(this.#receiveTimer);
      this.#countArriving(0);
      this.#giveBack(this.#budgeted);
    });
    this.#flowing = !streaming;
    if (streaming) {
      const start = (event: string) => {
        if (event !== "data") return;
        this.off("newListener", start);
        // The listener is added just after this event: what came before it is given to it next, then the end.
        queueMicrotask(() => {
          this.#flowing = true;
          for (const message of this.#held.splice(0)) if (!this.#ended) this.emit("data", message);
          // Handed on: the held messages' bytes (counted until now) are given back.
          this.#heldBytes = 0;
          if (!this.#ended) this.#giveBack(this.#budgeted - this.#frames.pendingBytes);
          if (this.#endHeld && !this.#ended) this.emit("end");
        });
      };
      this.on("newListener", start);
    }
    this.#stream = stream;
    this.#codec = codec;
    this.#maxMessageBytes = maxMessageBytes;
    this.#frames = new MessageFrames(maxMessageBytes);
    this.metadata = new Headers(headers);
    this.#encoding = headers.get("grpc-encoding")?.[0] ?? "identity";
    const timeout = headers.get("grpc-timeout")?.[0];
    const ms = timeout === undefined ? Number.NaN : timeoutMs(timeout);
    this.#deadline = Number.isFinite(ms) && ms <= MAX_SERVER_DEADLINE_MS ? Date.now() + ms : Infinity;
    stream.onData = (chunk) => this.#onData(chunk);
    stream.onEnd = () => {
      this.#clientEnded = true;
      if (!this.streaming) {
        this.#receiving(false);
        this.#countArriving(0);
      }
      if (!this.#flowing) this.#endHeld = true;
      else if (!this.#ended) this.emit("end");
    };
    stream.onReset = () => {
      if (this.#ended) return;
      this.#ended = true;
      this.cancelled = true;
      this.emit("cancelled");
      this.emit("close");
    };
  }

  /** The client's deadline, ms since the epoch; Infinity when it gave none (or one past a Node timer's reach). */
  getDeadline(): number {
    return this.#deadline;
  }

  get writableEnded(): boolean {
    return this.#ended;
  }

  get destroyed(): boolean {
    return this.cancelled;
  }

  /** Sends one response message. */
  write(message: unknown): void {
    if (this.#ended) return;
    const body = this.#codec.responseSerialize(message);
    const framed = Buffer.allocUnsafe(5 + body.length);
    framed[0] = 0;
    framed.writeUInt32BE(body.length, 1);
    body.copy(framed, 5);
    this.#stream.respond(RESPONSE_HEADERS);
    this.#stream.write(framed);
  }

  /** Ends the call with status OK. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#stream.headersSent) this.#stream.end(OK_TRAILERS);
    else this.#stream.respond(statusOnlyHeaders(GRPC_STATUS.OK, ""), true);
    this.emit("close");
  }

  /** Ends the call with a failing gRPC status (for what the client sent too: its side stops at RST_STREAM NO_ERROR). */
  fail(code: number, details: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#stream.headersSent) this.#stream.end(encodeLiteralHeaders(statusPairs(code, details)));
    else this.#stream.respond(statusOnlyHeaders(code, details), true);
    this.emit("close");
  }

  #onData(chunk: Buffer): void {
    if (this.#ended) return;
    // Only bytes received count (a message's declared length reserves nothing), as the HTTP door counts a body's.
    if (!this.#take(chunk.length)) {
      this.fail(GRPC_STATUS.RESOURCE_EXHAUSTED, OVER_BUDGET);
      return;
    }
    if (!this.streaming) {
      this.#receiving(true);
      // A unary request is whole at the client's end, often in the same read as its last bytes: it counts as arriving
      // only if it is still arriving once that read is handled (one check per read).
      if (!this.#arrivingCheckDue && this.limits.budget !== undefined) {
        this.#arrivingCheckDue = true;
        queueMicrotask(() => this.#checkArriving());
      }
    }
    try {
      this.#frames.push(
        chunk,
        (framed) => this.#onMessage(framed),
        () => !this.#ended,
      );
    } catch (err) {
      if (!(err instanceof MessageTooLarge)) throw err;
      this.fail(GRPC_STATUS.RESOURCE_EXHAUSTED, err.message);
    }
    // A stream's messages, once decoded and handed on, hold nothing of the budget: only a message still arriving
    // does, and those held until the handler listens.
    if (this.streaming && !this.#ended) {
      if (!this.#countArriving(this.#frames.pendingBytes)) {
        this.fail(GRPC_STATUS.RESOURCE_EXHAUSTED, OVER_BUDGET);
        return;
      }
      this.#giveBack(this.#budgeted - this.#frames.pendingBytes - this.#heldBytes);
      this.#receiving(this.#frames.pendingBytes > 0);
    }
  }

  /**
   * Counts `bytes` of the call as still arriving (in the budget's share for them, what it counted before given back
   * to the share); false, counting nothing more, when they do not fit.
   */
  #countArriving(bytes: number): boolean {
    const budget = this.limits.budget;
    if (budget === undefined) return true;
    const more = bytes - this.#arriving;
    if (more > 0 && !budget.markArriving(more)) return false;
    if (more < 0) budget.settleArriving(-more);
    this.#arriving = bytes;
    return true;
  }

  /** A unary request still arriving once the read that brought its bytes is handled: in the share, or ended. */
  #checkArriving(): void {
    this.#arrivingCheckDue = false;
    if (this.#ended || this.#clientEnded) return;
    if (!this.#countArriving(this.#budgeted)) this.fail(GRPC_STATUS.RESOURCE_EXHAUSTED, OVER_BUDGET);
  }

  /** Starts the time a request or message has to be whole at its first byte (`arriving`), or stops it once whole. */
  #receiving(arriving: boolean): void {
    if (!arriving) {
      clearTimeout(this.#receiveTimer);
      this.#receiveTimer = undefined;
      return;
    }
    if (this.#receiveTimer !== undefined || this.#ended) return;
    const ms = this.limits.receiveMs ?? DEFAULT_RECEIVE_MS;
    this.#receiveTimer = setTimeout(
      () => this.fail(GRPC_STATUS.DEADLINE_EXCEEDED, `the request did not arrive whole within ${ms} ms`),
      ms,
    );
  }

  /** Counts `bytes` more against the budget (always room without one); false when they do not fit. */
  #take(bytes: number): boolean {
    const budget = this.limits.budget;
    if (budget === undefined) return true;
    if (!budget.take(bytes)) return false;
    this.#budgeted += bytes;
    return true;
  }

  #giveBack(bytes: number): void {
    const budget = this.limits.budget;
    if (bytes <= 0 || budget === undefined) return;
    this.#budgeted -= bytes;
    budget.release(bytes);
  }

  #onMessage({ compressed, bytes }: FramedMessage): void {
    const decoded = this.#decode(compressed, bytes);
    if (decoded === undefined) return;
    const { message, size } = decoded;
    if (!this.#flowing) {
      this.#heldBytes += size;
      if (this.#held.length >= MAX_HELD_MESSAGES || this.#heldBytes > MAX_HELD_BYTES) {
        this.fail(
          GRPC_STATUS.RESOURCE_EXHAUSTED,
          `over ${MAX_HELD_MESSAGES} messages or ${MAX_HELD_BYTES} bytes before the call started`,
        );
        return;
      }
      this.#held.push(message);
    } else if (this.streaming) this.emit("data", message);
    else if (this.request === undefined) this.request = message;
    else this.fail(GRPC_STATUS.INTERNAL, "a unary call carried more than one request message");
  }

  /**
   * A request message decoded, with its size (inflated, when it came compressed), or undefined after failing the
   * call. What a compressed message inflates by counts against the budget too, as the bytes it now holds.
   */
  #decode(compressed: boolean, bytes: Buffer): { message: unknown; size: number } | undefined {
    let plain = bytes;
    if (compressed) {
      const options = { maxOutputLength: this.#maxMessageBytes };
      try {
        if (this.#encoding === "gzip") plain = gunzipSync(bytes, options);
        else if (this.#encoding === "deflate") plain = inflateSync(bytes, options);
        else {
          this.fail(
            GRPC_STATUS.UNIMPLEMENTED,
            `Received message compressed with unsupported encoding "${this.#encoding}"`,
          );
          return undefined;
        }
      } catch {
        this.fail(GRPC_STATUS.RESOURCE_EXHAUSTED, "a compressed message is corrupt or over the size limit");
        return undefined;
      }
    }
    const inflatedBy = plain.length - bytes.length;
    if (inflatedBy > 0 && !this.#take(inflatedBy)) {
      this.fail(GRPC_STATUS.RESOURCE_EXHAUSTED, OVER_BUDGET);
      return undefined;
    }
    try {
      return { message: this.#codec.requestDeserialize(plain), size: plain.length };
    } catch {
      this.fail(GRPC_STATUS.INTERNAL, "Error deserializing request");
      return undefined;
    }
  }
}
