/**
 * @module One client connection: frames in, one handler call per request (concurrently, as RocketMQ's broker
 * runs them), each answer written with the request's opaque id and serialization; oneway requests get none.
 * Bounded: requests in flight per connection and their bytes across the process (past either, SYSTEM_BUSY at
 * once; a frame still arriving holds its bytes too, and has 30 s to be whole), answer bytes queued for a client
 * that does not read (past 1 MiB it is not read until they drain, past 32 MiB the connection is closed), and across
 * the process's connections (past it, new requests and large answers are SYSTEM_BUSY, the door's own requests to
 * clients not sent, the largest holder closed). A frame that does not decode closes the connection without an
 * answer: nothing after it can be trusted to be a frame.
 */
import type { Socket } from "node:net";
import { OVER_BUDGET } from "../core/request-bytes.js";
import { type AnswerShare, SMALL_ANSWER_BYTES, UNTAKEN_ANSWERS_FULL } from "../core/untaken-answers.js";
import type { HandlerContext } from "../http/context.js";
import { ACCESS } from "./access.js";
import type { Call, DoorView, Scope } from "./call.js";
import { ClientCalls, DEFAULT_CALL_TIMEOUT_MS } from "./client-calls.js";
import { type Answer, answerOfError, ResponseCode, refusal } from "./codes.js";
import { Fields } from "./fields.js";
import {
  encodeFrame,
  FrameDecoder,
  isOneway,
  isResponse,
  MAX_FRAME_BYTES,
  ONEWAY_FLAG,
  RESPONSE_FLAG,
  type RemotingCommand,
  SERIALIZE_JSON,
} from "./frame.js";
import { HANDLERS } from "./handlers.js";
import { authenticateRemoting } from "./signature.js";

/** Server version answered in every response header (RocketMQ's V4_9_8 ordinal). */
const SERVER_VERSION = 453;

export interface ConnectionLimits {
  maxInFlight: number;
  /**
   * A frame must be whole this long after its first byte came, or the connection is closed (its bytes, held of the
   * process's budget meanwhile, given back): the local server's body timeout, 30 s by default.
   */
  receiveMs: number;
  /** A connection silent both ways this long is closed (RocketMQ's channel idle time: 120 s). */
  idleMs: number;
  /** Answer bytes waiting for a client that does not read, at most. */
  maxQueuedBytes: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxInFlight: 256,
  receiveMs: 30_000,
  idleMs: 120_000,
  maxQueuedBytes: 2 * MAX_FRAME_BYTES,
};

/** What a request holds while served: its body, and its header's fields with a frame's fixed part. */
function requestBytesOf(request: RemotingCommand): number {
  let bytes = FRAME_FIXED_BYTES + (request.body?.byteLength ?? 0) + (request.remark?.length ?? 0);
  for (const [name, value] of Object.entries(request.extFields)) bytes += name.length + value.length;
  return bytes;
}

/**
 * The longest header a frame refused while arriving may wait for (beside the budget) to be answered SYSTEM_BUSY:
 * a send's, with its 32 KiB of properties, fits.
 */
const REFUSED_HEADER_BYTES = 64 * 1024;

/** The frame answering `request` with `answer`, in the request's serialization. */
function answerFrame(request: RemotingCommand, answer: Answer): Buffer {
  return encodeFrame({
    code: answer.code,
    language: "JAVA",
    version: SERVER_VERSION,
    opaque: request.opaque,
    flag: RESPONSE_FLAG,
    remark: answer.remark,
    extFields: answer.extFields ?? {},
    serializeType: request.serializeType,
    body: answer.body,
  });
}

/** Answer bytes waiting for a client past which its connection is not read until they drain. */
const READ_PAUSE_BYTES = 1024 * 1024;

/** A frame's length, header length, and the header's fixed fields (code, language, version, opaque, flag). */
const FRAME_FIXED_BYTES = 64;

export class Connection {
  readonly #decoder = new FrameDecoder();
  readonly #abort = new AbortController();
  #inFlight = 0;
  #opaque = 0;
  readonly done: Promise<void>;
  readonly #pending = new Set<Promise<void>>();
  readonly #calls = new ClientCalls();
  /** Bytes of a frame still arriving, counted against the process's budget (whole frames count per request). */
  #partialBytes = 0;
  /** Set while a frame is arriving: its time to be whole. */
  #receiveTimer: NodeJS.Timeout | undefined;
  /** This connection's part of the process's untaken answers: the bytes waiting in its socket. */
  readonly #answers: AnswerShare;

  constructor(
    private readonly socket: Socket,
    private readonly ctx: () => HandlerContext,
    private readonly door: DoorView,
    scope: Omit<Scope, "closed" | "subscriptions" | "clientId" | "heartbeat" | "notify" | "call">,
    private readonly limits: ConnectionLimits,
  ) {
    this.scope = {
      ...scope,
      closed: this.#abort.signal,
      subscriptions: new Map(),
      clientId: undefined,
      heartbeat: undefined,
      notify: (code, extFields, body) => this.notify(code, extFields, body),
      call: (code, extFields, body, timeoutMs) => this.call(code, extFields, body, timeoutMs),
    };
    this.#answers = door.untakenAnswers.share(() => socket.destroy());
    this.done = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.once("close", () => {
      this.#abort.abort();
      this.#calls.close();
      this.#holdPartial(0);
      this.#answers.release();
    });
    socket.on("error", () => socket.destroy());
    // The HTTP server keeps half-open sockets; a remoting client that ends its side is gone.
    socket.once("end", () => socket.destroy());
    socket.setNoDelay(true);
    // Clients heartbeat every 30 s and pulls wait at most the door's suspend time: a silent connection is dead.
    socket.setTimeout(limits.idleMs, () => socket.destroy());
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
  }

  readonly scope: Scope;

  /** Requests being answered now (close() waits for them). */
  settled(): Promise<void> {
    return Promise.all(this.#pending).then(() => undefined);
  }

  receive(chunk: Buffer): void {
    if (this.socket.destroyed) return;
    let frames: RemotingCommand[];
    try {
      frames = this.#decoder.push(chunk);
    } catch {
      this.socket.destroy();
      return;
    }
    // A frame that came whole counts as its request from here on (#dispatch), no longer as bytes arriving; and its
    // time to arrive ends: the next frame's starts at its first byte.
    if (frames.length > 0) this.#holdPartial(0);
    for (const frame of frames) {
      if (isResponse(frame)) {
        // The answer to one of the door's calls; a stray answer is dropped.
        this.#calls.answered(frame);
        continue;
      }
      this.#dispatch(frame);
    }
    if (this.#holdPartial(this.#decoder.buffered)) return;
    // No room in the budget for the rest of a frame still arriving: it is refused as a whole one would be (by its
    // header's opaque id) and the rest of it discarded as it comes. Until its header is in, at most
    // REFUSED_HEADER_BYTES of it wait beside the budget; a longer header, or one that cannot be one, closes the
    // connection.
    const refused = this.#decoder.dropPartial(REFUSED_HEADER_BYTES);
    if (refused === "header-incomplete") {
      this.#arriving(true);
      return;
    }
    this.#holdPartial(0);
    if (refused === undefined) this.socket.destroy();
    else if (isResponse(refused)) this.#calls.abandon(refused.opaque, "its answer did not fit the broker's budget");
    else this.#answer(refused, refusal(ResponseCode.SYSTEM_BUSY, OVER_BUDGET));
  }

  /**
   * Holds `bytes` of a frame still arriving against the process's budget, as arriving bytes (their share of it), giving
   * back what it held past them, with its time to be whole running while any are held; false when more do not fit
   * (nothing more is taken then).
   */
  #holdPartial(bytes: number): boolean {
    const more = bytes - this.#partialBytes;
    if (more > 0 && !this.door.requestBytes.take(more, true)) return false;
    if (more < 0) this.door.requestBytes.release(-more, true);
    this.#partialBytes = bytes;
    this.#arriving(bytes > 0);
    return true;
  }

  /** Starts a frame's time to be whole at its first byte (`arriving`), or stops it once whole. */
  #arriving(arriving: boolean): void {
    if (!arriving) {
      clearTimeout(this.#receiveTimer);
      this.#receiveTimer = undefined;
    } else if (this.#receiveTimer === undefined && !this.socket.destroyed)
      this.#receiveTimer = setTimeout(() => this.socket.destroy(), this.limits.receiveMs);
  }

  #dispatch(request: RemotingCommand): void {
    if (this.#inFlight >= this.limits.maxInFlight) {
      this.#answer(
        request,
        refusal(ResponseCode.SYSTEM_BUSY, `over ${this.limits.maxInFlight} requests in flight; retry`),
      );
      return;
    }
    // Answers not taken past the process's bound: refused before any work (its answer is small and goes).
    if (this.#answers.full()) {
      this.#answer(request, refusal(ResponseCode.SYSTEM_BUSY, UNTAKEN_ANSWERS_FULL));
      return;
    }
    // Its bytes count against the process's budget until it is answered (a waiting pull holds only its header's).
    const size = requestBytesOf(request);
    if (!this.door.requestBytes.take(size)) {
      this.#answer(request, refusal(ResponseCode.SYSTEM_BUSY, OVER_BUDGET));
      return;
    }
    this.#inFlight++;
    const work = this.#serve(request)
      .catch(answerOfError)
      .then((answer) => this.#answer(request, answer))
      .finally(() => {
        this.#inFlight--;
        this.door.requestBytes.release(size);
        this.#pending.delete(work);
      });
    this.#pending.add(work);
  }

  async #serve(request: RemotingCommand): Promise<Answer> {
    const handler = HANDLERS.get(request.code);
    if (handler === undefined)
      return refusal(
        ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
        `request code ${request.code} is not served by Nimbus (docs/remoting.md)`,
      );
    const ctx = this.ctx();
    const fields = new Fields(request.extFields);
    const call: Call = { ctx, door: this.door, request, fields, scope: this.scope, authorize: async () => undefined };
    const auth = ctx.auth;
    if (auth === undefined) return handler(call);
    // With auth on: RocketMQ's ACL signature, then what the code's HTTP counterpart needs (access.ts), before
    // the handler runs: a refused request writes nothing.
    const user = await authenticateRemoting(auth, request);
    const needs = ACCESS.get(request.code);
    if (needs === undefined)
      return refusal(ResponseCode.NO_PERMISSION, `request code ${request.code} has no ACL rule: refused with auth on`);
    await auth.authorizePermissions(user, await needs(call));
    return handler({ ...call, authorize: (more) => auth.authorizePermissions(user, more) });
  }

  #answer(request: RemotingCommand, answer: Answer): void {
    if (isOneway(request) || this.socket.destroyed) return;
    let frame: Buffer;
    try {
      frame = answerFrame(request, answer);
      if (frame.byteLength - 4 > MAX_FRAME_BYTES) throw new Error(`an answer of ${frame.byteLength} bytes`);
    } catch (err) {
      console.error("nimbus remoting: an answer could not be encoded", err);
      frame = answerFrame(request, refusal(ResponseCode.SYSTEM_ERROR, "the answer could not be encoded"));
    }
    if (this.socket.writableLength + frame.byteLength > this.limits.maxQueuedBytes) {
      this.socket.destroy();
      return;
    }
    // Past the process's bound (clients of this door or of the gRPC door not taking their answers), a large answer (a
    // pull's, a query's: reads) is not queued, SYSTEM_BUSY goes in its place. A small one goes: its request was taken
    // while there was room (#dispatch), so these are bounded by the requests in flight.
    this.#countUntaken();
    if (frame.byteLength > SMALL_ANSWER_BYTES && !this.#answers.fits(frame.byteLength))
      frame = answerFrame(request, refusal(ResponseCode.SYSTEM_BUSY, UNTAKEN_ANSWERS_FULL));
    this.#write(frame);
  }

  /**
   * Writes a frame; the frames written in one turn of the event loop (the answers of one group commit, the pulls
   * answered together) leave in one system call: the socket is corked at the first and uncorked once the turn's
   * callbacks and promise continuations have run, before the loop waits for I/O again, so no answer waits longer.
   */
  #write(frame: Buffer): void {
    if (!this.#corked) {
      this.#corked = true;
      this.socket.cork();
      process.nextTick(this.#uncork);
    }
    this.socket.write(frame, this.#countUntaken);
    this.#countUntaken();
  }

  #corked = false;
  readonly #uncork = () => {
    this.#corked = false;
    this.socket.uncork();
    this.#countUntaken();
    // A client leaving over 1 MiB unread is not read meanwhile (its requests wait in the kernel), so what goes
    // whatever the process's bound (the refusals, small answers) is answered no faster than the client takes it. A
    // frame arriving keeps its 30 s to be whole: its bytes are held of the budget meanwhile.
    if (this.socket.writableLength > READ_PAUSE_BYTES && !this.socket.isPaused()) {
      this.socket.pause();
      this.socket.once("drain", () => this.socket.resume());
    }
  };

  /** Sets this connection's share of the process's untaken answers: what waits in its socket (none once closed). */
  readonly #countUntaken = () => this.#answers.set(this.socket.destroyed ? 0 : this.socket.writableLength);

  /** A oneway request to the client; dropped when the connection is gone or its client does not read. */
  notify(code: number, extFields: Record<string, string>, body?: Uint8Array): void {
    this.#request(code, extFields, body, ONEWAY_FLAG);
  }

  /** A request the client answers: its response, or a ClientCallError (timeout, closed, too many waiting). */
  call(
    code: number,
    extFields: Record<string, string>,
    body?: Uint8Array,
    timeoutMs = DEFAULT_CALL_TIMEOUT_MS,
  ): Promise<RemotingCommand> {
    const opaque = this.#nextOpaque();
    const answer = this.#calls.expect(opaque, timeoutMs);
    const unsent = this.#request(code, extFields, body, 0, opaque);
    if (unsent !== undefined) this.#calls.abandon(opaque, unsent);
    return answer;
  }

  #nextOpaque(): number {
    this.#opaque = (this.#opaque + 1) & 0x7fffffff;
    return this.#opaque;
  }

  /** Writes a request frame to the client; else says why not (the connection gone, clients not reading). */
  #request(
    code: number,
    extFields: Record<string, string>,
    body: Uint8Array | undefined,
    flag: number,
    opaque = this.#nextOpaque(),
  ): string | undefined {
    if (this.socket.destroyed) return "the connection is closed";
    const frame = encodeFrame({
      code,
      language: "JAVA",
      version: SERVER_VERSION,
      opaque,
      flag,
      remark: undefined,
      extFields,
      serializeType: SERIALIZE_JSON,
      body,
    });
    if (this.socket.writableLength + frame.byteLength > this.limits.maxQueuedBytes) return "the client does not read";
    this.#countUntaken();
    if (!this.#answers.fits(frame.byteLength)) return UNTAKEN_ANSWERS_FULL;
    this.#write(frame);
    return undefined;
  }

  close(): void {
    this.socket.destroy();
  }
}
