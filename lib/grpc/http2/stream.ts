/**
 * @module One HTTP/2 stream of a server connection: what the request side calls back with, and what the
 * response side sends, through the connection that owns it (flow control, framing, its end).
 */
import type { UntakenAnswers } from "../../core/untaken-answers.js";

/** What a stream asks of its connection. */
export interface StreamOwner {
  sendHeaders(stream: ServerStream, block: Buffer, endStream: boolean): void;
  sendData(stream: ServerStream, payload: Buffer): void;
  sendTrailers(stream: ServerStream, block: Buffer): void;
  resetStream(stream: ServerStream, code: number): void;
  /** Whether answers the client has not taken are past the connection's bound or the process's. */
  answersFull(): boolean;
}

/** The request's headers, each name (lower case, as HTTP/2 sends them) with its values in order. */
export type RequestHeaders = Map<string, string[]>;

export interface ConnectionOptions {
  maxConcurrentStreams: number;
  /** The largest header block (HEADERS and its CONTINUATIONs) accepted. */
  maxHeaderBlockBytes: number;
  /** The window this server gives each stream, and (times 16) the connection. */
  streamWindow: number;
  /** An idle connection is pinged this often; 0: never. */
  keepaliveMs: number;
  /** A ping unanswered this long drops the connection. */
  keepaliveTimeoutMs: number;
  /**
   * Answer bytes the client has not taken, across its streams (waiting for its windows, or in a socket it does not
   * read), at most: a stream whose answer goes past it is reset ENHANCE_YOUR_CALM (a client that asks but does not
   * read).
   */
  maxPendingBytes: number;
  /** The process's ledger of untaken answers, bounding them across connections (default: the process's own). */
  untakenAnswers?: UntakenAnswers | undefined;
}

export type StreamListener = (stream: ServerStream, headers: RequestHeaders) => void;

const nothing = () => {};

export class ServerStream {
  /** Called with each DATA frame's payload, in order. */
  onData: (chunk: Buffer) => void = nothing;
  /** The client ended its side (END_STREAM). */
  onEnd: () => void = nothing;
  /** The stream ended without the server ending it: reset by the client, or its connection gone. */
  onReset: () => void = nothing;

  /** The client sent END_STREAM. */
  remoteEnded = false;
  /** The server sent (or queued) its END_STREAM, or reset the stream. */
  localEnded = false;
  /** Gone from its connection: both sides ended, or reset. */
  closed = false;
  headersSent = false;

  /** Bytes the server may still send on this stream (the client's window for it). */
  sendWindow: number;
  /** Bytes the client may still send before a WINDOW_UPDATE. */
  receiveWindow: number;
  /** Received bytes not yet given back to the client's window. */
  unacknowledged = 0;
  /** DATA payloads waiting for window, oldest first, and the trailers to send after them. */
  readonly pending: Buffer[] = [];
  pendingTrailers: Buffer | undefined;

  constructor(
    readonly id: number,
    private readonly owner: StreamOwner,
    sendWindow: number,
    receiveWindow: number,
  ) {
    this.sendWindow = sendWindow;
    this.receiveWindow = receiveWindow;
  }

  /** Sends the response headers (once); `endStream` for a headers-only (trailers-only) response. */
  respond(block: Buffer, endStream = false): void {
    if (this.localEnded || this.headersSent) return;
    this.headersSent = true;
    this.owner.sendHeaders(this, block, endStream);
  }

  /** Queues a DATA payload, sent as the windows allow. */
  write(payload: Buffer): void {
    if (this.localEnded) return;
    this.owner.sendData(this, payload);
  }

  /** Ends the response with trailers, after every payload written before. */
  end(trailers: Buffer): void {
    if (this.localEnded) return;
    this.owner.sendTrailers(this, trailers);
  }

  /** Whether answers not taken are past the connection's bound or the process's: a new call is refused. */
  get answersFull(): boolean {
    return this.owner.answersFull();
  }

  /** Abandons the stream with RST_STREAM `code`. */
  reset(code: number): void {
    if (this.closed) return;
    this.owner.resetStream(this, code);
  }
}
