/**
 * @module One HTTP/2 server connection on a socket (RFC 9113), as a gRPC server needs it: the client's streams,
 * flow control both ways, SETTINGS, PING, keepalive, RST_STREAM and GOAWAY. Frames are read straight from the
 * socket's bytes; the answers of one event-loop turn leave in one write; one object per stream (`ServerStream`).
 *
 * Bounded: `maxConcurrentStreams` streams (more: REFUSED_STREAM), header blocks of `maxHeaderBlockBytes` (more:
 * ENHANCE_YOUR_CALM), frames of 16 KiB, windows as RFC 9113 caps them, answers the client has not taken
 * (`maxPendingBytes`, and across connections `untakenAnswers`; see `sendData`). A protocol error ends it with GOAWAY.
 */
import type { Duplex } from "node:stream";
import { type AnswerShare, PROCESS_UNTAKEN_ANSWERS, roomFor } from "../../core/untaken-answers.js";
import { FrameReader } from "./frame-reader.js";
import { FrameWriter } from "./frame-writer.js";
import {
  ConnectionError,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  FLAG,
  FRAME,
  H2_ERROR,
  MAX_WINDOW,
  readSettings,
  serverSettings,
  windowIncrement,
  words,
} from "./frames.js";
import { decodeHeaders, type HeaderBlock, HeaderBlocks, unpadded } from "./header-blocks.js";
import { CompressionError, HpackDecoder } from "./hpack.js";
import { Keepalive } from "./keepalive.js";
import { type ConnectionOptions, ServerStream, type StreamListener, type StreamOwner } from "./stream.js";

export class Http2Connection implements StreamOwner {
  readonly #socket: Duplex;
  readonly #options: ConnectionOptions;
  readonly #onStream: StreamListener;
  readonly #decoder = new HpackDecoder();
  readonly #streams = new Map<number, ServerStream>();
  readonly #blocked = new Set<ServerStream>(); // streams with DATA waiting for window
  readonly #reader = new FrameReader((type, flags, streamId, payload) => this.#onFrame(type, flags, streamId, payload));
  readonly #writer: FrameWriter;
  /** This connection's part of the process's untaken answers: its pending DATA and its unsent bytes. */
  readonly #answers: AnswerShare;
  readonly #headerBlocks: HeaderBlocks;
  #lastStreamId = 0;
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = DEFAULT_MAX_FRAME;
  #sendWindow = DEFAULT_WINDOW;
  #receiveWindow: number;
  #receivedUnacknowledged = 0;
  #pendingBytes = 0; // DATA bytes of every stream waiting for window
  #goingAway = false;
  #ended = false;
  readonly #keepalive: Keepalive;
  readonly #closedListeners = new Set<() => void>();

  constructor(socket: Duplex, onStream: StreamListener, options: ConnectionOptions) {
    this.#socket = socket;
    this.#onStream = onStream;
    this.#options = options;
    this.#answers = (options.untakenAnswers ?? PROCESS_UNTAKEN_ANSWERS).share(() => this.destroy());
    this.#writer = new FrameWriter(socket, () => this.#countUntaken());
    this.#headerBlocks = new HeaderBlocks(options.maxHeaderBlockBytes);
    this.#receiveWindow = options.streamWindow * 16;
    this.#writer.frame(FRAME.SETTINGS, 0, 0, serverSettings(options));
    this.#writer.frame(FRAME.WINDOW_UPDATE, 0, 0, words(this.#receiveWindow - DEFAULT_WINDOW));
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
    socket.on("error", () => this.#lost());
    socket.on("close", () => this.#lost());
    this.#keepalive = new Keepalive(
      options.keepaliveMs,
      options.keepaliveTimeoutMs,
      () => this.#writer.frame(FRAME.PING, 0, 0, Buffer.alloc(8)),
      () => this.destroy(),
    );
  }

  /** Called once when the socket is gone. */
  onClosed(listener: () => void): void {
    this.#closedListeners.add(listener);
  }

  /** Stops taking streams (GOAWAY NO_ERROR); the socket ends once the open streams have. */
  goAway(): void {
    if (this.#goingAway || this.#ended) return;
    this.#goingAway = true;
    this.#writer.frame(FRAME.GOAWAY, 0, 0, words(this.#lastStreamId, H2_ERROR.NO_ERROR));
    this.#endIfIdle();
  }

  /** Drops the socket now; open streams are reset. */
  destroy(): void {
    this.#socket.destroy();
    this.#lost();
  }

  sendHeaders(stream: ServerStream, block: Buffer, endStream: boolean): void {
    this.#writer.frame(FRAME.HEADERS, FLAG.END_HEADERS | (endStream ? FLAG.END_STREAM : 0), stream.id, block);
    if (endStream) this.#endLocal(stream);
  }

  sendData(stream: ServerStream, payload: Buffer): void {
    if (payload.length === 0 || this.#ended) return;
    // Untaken: waiting for windows or in an unread socket (windows may be 2^31-1), the connection's and the process's.
    // Past either, a payload is not queued, its stream reset; a small one has an eighth more (roomFor).
    const untaken = this.#countUntaken();
    const size = payload.length;
    if (untaken + size > roomFor(this.#options.maxPendingBytes, size) || !this.#answers.fits(size)) {
      this.#streamError(stream, H2_ERROR.ENHANCE_YOUR_CALM);
      return;
    }
    stream.pending.push(payload);
    this.#pendingBytes += size;
    this.#drain(stream);
    this.#countUntaken();
  }

  sendTrailers(stream: ServerStream, block: Buffer): void {
    stream.localEnded = true;
    if (stream.pending.length > 0) {
      stream.pendingTrailers = block;
      return;
    }
    this.#writer.frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, stream.id, block);
    this.#endLocal(stream);
  }

  resetStream(stream: ServerStream, code: number): void {
    this.#writer.frame(FRAME.RST_STREAM, 0, stream.id, words(code));
    stream.localEnded = true;
    this.#close(stream);
  }

  /** This connection's untaken answer bytes, set as its share of the process's (none once it has ended). */
  #countUntaken(): number {
    return this.#answers.set(this.#ended ? 0 : this.#pendingBytes + this.#writer.unsentBytes);
  }

  answersFull(): boolean {
    return this.#countUntaken() > this.#options.maxPendingBytes || this.#answers.full();
  }

  /** Sends what `stream` has waiting, as far as both windows allow; then its trailers, if they wait. */
  #drain(stream: ServerStream): void {
    while (stream.pending.length > 0) {
      const allowed = Math.min(this.#sendWindow, stream.sendWindow, this.#peerMaxFrame);
      if (allowed <= 0) {
        this.#blocked.add(stream);
        return;
      }
      const head = stream.pending[0] as Buffer;
      const chunk = head.length <= allowed ? head : head.subarray(0, allowed);
      if (chunk === head) stream.pending.shift();
      else stream.pending[0] = head.subarray(allowed);
      this.#sendWindow -= chunk.length;
      stream.sendWindow -= chunk.length;
      this.#pendingBytes -= chunk.length;
      this.#writer.frame(FRAME.DATA, 0, stream.id, chunk);
    }
    this.#blocked.delete(stream);
    const trailers = stream.pendingTrailers;
    if (trailers !== undefined && !stream.closed) {
      stream.pendingTrailers = undefined;
      this.#writer.frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, stream.id, trailers);
      this.#endLocal(stream);
    }
  }

  /** The server's side of `stream` is done: closed if the client's is too, else reset (RFC 9113 §8.1). */
  #endLocal(stream: ServerStream): void {
    stream.localEnded = true;
    if (!stream.remoteEnded) this.#writer.frame(FRAME.RST_STREAM, 0, stream.id, words(H2_ERROR.NO_ERROR));
    this.#close(stream);
  }

  #close(stream: ServerStream): void {
    if (stream.closed) return;
    stream.closed = true;
    for (const payload of stream.pending.splice(0)) this.#pendingBytes -= payload.length;
    this.#countUntaken();
    this.#streams.delete(stream.id);
    this.#blocked.delete(stream);
    this.#endIfIdle();
  }

  #endIfIdle(): void {
    if (this.#goingAway && this.#streams.size === 0 && !this.#ended) {
      this.#writer.flush();
      this.#writer.close();
      this.#socket.end();
    }
  }

  #lost(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#writer.close();
    this.#keepalive.stop();
    const open = [...this.#streams.values()];
    this.#streams.clear();
    this.#blocked.clear();
    this.#answers.release();
    for (const stream of open) {
      stream.closed = true;
      stream.onReset();
    }
    for (const listener of this.#closedListeners) listener();
  }

  /** Ends the connection for a protocol error: GOAWAY with its code, then the socket. */
  #fail(code: number, message: string): void {
    if (this.#ended) return;
    const debug = Buffer.from(message.slice(0, 256), "utf8");
    this.#writer.frame(FRAME.GOAWAY, 0, 0, Buffer.concat([words(this.#lastStreamId, code), debug]));
    this.#writer.flush();
    this.#socket.end();
    setTimeout(() => this.#socket.destroy(), 1000).unref();
    this.#lost();
  }

  #read(chunk: Buffer): void {
    if (this.#ended) return;
    this.#keepalive.heard();
    try {
      if (this.#reader.read(chunk, () => !this.#ended) === "not-http2") this.destroy();
    } catch (err) {
      if (err instanceof ConnectionError) this.#fail(err.code, err.message);
      else if (err instanceof CompressionError) this.#fail(H2_ERROR.COMPRESSION_ERROR, err.message);
      else throw err;
    }
  }

  #onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#headerBlocks.open && type !== FRAME.CONTINUATION)
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, "a header block was interrupted");
    switch (type) {
      case FRAME.DATA:
        this.#onData(flags, streamId, payload);
        return;
      case FRAME.HEADERS:
        this.#onHeaderBlock(this.#headerBlocks.headers(flags, streamId, payload));
        return;
      case FRAME.CONTINUATION:
        this.#onHeaderBlock(this.#headerBlocks.continuation(flags, streamId, payload));
        return;
      case FRAME.RST_STREAM:
        this.#onReset(streamId, payload);
        return;
      case FRAME.SETTINGS:
        this.#onSettings(flags, streamId, payload);
        return;
      case FRAME.PING:
        if (payload.length !== 8 || streamId !== 0)
          throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, "a PING is 8 bytes on stream 0");
        if ((flags & FLAG.ACK) === 0) this.#writer.frame(FRAME.PING, FLAG.ACK, 0, Buffer.from(payload));
        return;
      case FRAME.GOAWAY:
        this.#goingAway = true;
        this.#endIfIdle();
        return;
      case FRAME.WINDOW_UPDATE:
        this.#onWindowUpdate(streamId, payload);
        return;
      case FRAME.PUSH_PROMISE:
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, "a client sent PUSH_PROMISE");
      default:
        // PRIORITY, and frame types this server does not know, are ignored (RFC 9113 §4.1, §5.5).
        return;
    }
  }

  #onHeaderBlock(block: HeaderBlock | undefined): void {
    if (block === undefined) return;
    const headers = decodeHeaders(this.#decoder, block.block);
    const endStream = (block.flags & FLAG.END_STREAM) !== 0;
    const existing = this.#streams.get(block.id);
    if (existing !== undefined) {
      // Trailers from the client end its side; a HEADERS that does not, or after its end, is out of place.
      if (!endStream) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, "a second HEADERS without END_STREAM");
      if (existing.remoteEnded) {
        this.#streamError(existing, H2_ERROR.STREAM_CLOSED);
        return;
      }
      this.#onRemoteEnd(existing);
      return;
    }
    if (block.id <= this.#lastStreamId)
      throw new ConnectionError(H2_ERROR.STREAM_CLOSED, `HEADERS on closed stream ${block.id}`);
    this.#lastStreamId = block.id;
    if (this.#goingAway || this.#streams.size >= this.#options.maxConcurrentStreams) {
      this.#writer.frame(FRAME.RST_STREAM, 0, block.id, words(H2_ERROR.REFUSED_STREAM));
      return;
    }
    const stream = new ServerStream(block.id, this, this.#peerInitialWindow, this.#options.streamWindow);
    this.#streams.set(block.id, stream);
    stream.remoteEnded = endStream;
    this.#onStream(stream, headers);
    if (endStream && !stream.closed) stream.onEnd();
  }

  #onData(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, "DATA on stream 0");
    this.#receiveWindow -= payload.length;
    if (this.#receiveWindow < 0)
      throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, "DATA past the connection's window");
    this.#receivedUnacknowledged += payload.length;
    if (this.#receivedUnacknowledged >= (this.#options.streamWindow * 16) / 2) {
      this.#writer.frame(FRAME.WINDOW_UPDATE, 0, 0, words(this.#receivedUnacknowledged));
      this.#receiveWindow += this.#receivedUnacknowledged;
      this.#receivedUnacknowledged = 0;
    }
    const stream = this.#streams.get(streamId);
    if (stream === undefined) {
      if (streamId > this.#lastStreamId)
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, `DATA on idle stream ${streamId}`);
      return; // A stream this server ended or reset: the client had not heard yet.
    }
    if (stream.remoteEnded) {
      this.#streamError(stream, H2_ERROR.STREAM_CLOSED);
      return;
    }
    stream.receiveWindow -= payload.length;
    if (stream.receiveWindow < 0) {
      this.#streamError(stream, H2_ERROR.FLOW_CONTROL_ERROR);
      return;
    }
    const data = unpadded(flags, payload, 0);
    if (data.length > 0) stream.onData(data);
    if (flags & FLAG.END_STREAM) {
      this.#onRemoteEnd(stream);
      return;
    }
    stream.unacknowledged += payload.length;
    if (!stream.closed && stream.unacknowledged >= this.#options.streamWindow / 2) {
      this.#writer.frame(FRAME.WINDOW_UPDATE, 0, stream.id, words(stream.unacknowledged));
      stream.receiveWindow += stream.unacknowledged;
      stream.unacknowledged = 0;
    }
  }

  /** A stream error (RFC 9113 §5.4.2): the stream is reset with `code`, its call cancelled. */
  #streamError(stream: ServerStream, code: number): void {
    this.resetStream(stream, code);
    stream.onReset();
  }

  #onRemoteEnd(stream: ServerStream): void {
    stream.remoteEnded = true;
    if (stream.closed) return;
    if (stream.localEnded && stream.pendingTrailers === undefined) this.#close(stream);
    stream.onEnd();
  }

  #onReset(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, "RST_STREAM is 4 bytes");
    const stream = this.#streams.get(streamId);
    if (stream === undefined) return;
    stream.localEnded = true;
    this.#close(stream);
    stream.onReset();
  }

  #onSettings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, "SETTINGS on a stream");
    if (flags & FLAG.ACK) return;
    const { initialWindow, maxFrame } = readSettings(payload);
    if (initialWindow !== undefined) {
      const delta = initialWindow - this.#peerInitialWindow;
      this.#peerInitialWindow = initialWindow;
      for (const stream of this.#streams.values()) {
        stream.sendWindow += delta;
        if (stream.sendWindow > MAX_WINDOW)
          throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, "a stream's window over 2^31-1");
      }
    }
    if (maxFrame !== undefined) this.#peerMaxFrame = maxFrame;
    this.#writer.frame(FRAME.SETTINGS, FLAG.ACK, 0, Buffer.alloc(0));
    for (const stream of [...this.#blocked]) this.#drain(stream);
  }

  #onWindowUpdate(streamId: number, payload: Buffer): void {
    const increment = windowIncrement(payload);
    if (streamId === 0) {
      if (increment === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, "a WINDOW_UPDATE of 0");
      this.#sendWindow += increment;
      if (this.#sendWindow > MAX_WINDOW) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, "a window over 2^31-1");
      for (const stream of [...this.#blocked]) this.#drain(stream);
      return;
    }
    const stream = this.#streams.get(streamId);
    if (stream === undefined) return;
    if (increment === 0 || stream.sendWindow + increment > MAX_WINDOW) {
      this.#streamError(stream, increment === 0 ? H2_ERROR.PROTOCOL_ERROR : H2_ERROR.FLOW_CONTROL_ERROR);
      return;
    }
    stream.sendWindow += increment;
    if (this.#blocked.has(stream)) this.#drain(stream);
  }
}
