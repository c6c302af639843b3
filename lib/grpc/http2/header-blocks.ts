/**
 * @module A header block as it arrives: a HEADERS frame and the CONTINUATION frames after it (RFC 9113 §6.2,
 * §6.10), padding and priority fields dropped, bounded by `maxBytes`. Nothing else may come between them.
 */
import { ConnectionError, FLAG, H2_ERROR } from "./frames.js";
import type { HpackDecoder } from "./hpack.js";
import type { RequestHeaders } from "./stream.js";

/** A complete header block: its stream, the HEADERS frame's flags, the block's bytes. */
export interface HeaderBlock {
  id: number;
  flags: number;
  block: Buffer;
}

/** A frame's payload without its padding, and without a HEADERS frame's priority fields (`priorityBytes`). */
export function unpadded(flags: number, payload: Buffer, priorityBytes: number): Buffer {
  let start = 0;
  let end = payload.length;
  if (flags & FLAG.PADDED) {
    start = 1;
    end -= payload[0] ?? 0;
  }
  start += priorityBytes;
  if (end < start) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, "a frame's padding is longer than it");
  return payload.subarray(start, end);
}

/** A block's headers, each name with its values in order; decoded whatever becomes of its stream (tables follow). */
export function decodeHeaders(decoder: HpackDecoder, block: Buffer): RequestHeaders {
  const headers: RequestHeaders = new Map();
  decoder.decode(block, (name, value) => {
    const values = headers.get(name);
    if (values === undefined) headers.set(name, [value]);
    else values.push(value);
  });
  return headers;
}

export class HeaderBlocks {
  #continuing: { id: number; flags: number; parts: Buffer[]; bytes: number } | undefined;
  /** Frames in one block, at most (empty CONTINUATIONs cost no bytes, so bytes alone do not bound them). */
  static readonly MAX_FRAMES = 64;

  constructor(private readonly maxBytes: number) {}

  /** A header block is under way: only its CONTINUATION may come next. */
  get open(): boolean {
    return this.#continuing !== undefined;
  }

  /** A HEADERS frame: its block when complete, else undefined (CONTINUATIONs follow). */
  headers(flags: number, streamId: number, payload: Buffer): HeaderBlock | undefined {
    if (streamId === 0 || streamId % 2 === 0)
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, `HEADERS on stream ${streamId}`);
    const fragment = unpadded(flags, payload, flags & FLAG.PRIORITY ? 5 : 0);
    // Copied: the frame's bytes belong to the connection's read buffer.
    this.#continuing = { id: streamId, flags, parts: [Buffer.from(fragment)], bytes: fragment.length };
    return this.#next(flags);
  }

  /** A CONTINUATION frame: the block when this one completes it. */
  continuation(flags: number, streamId: number, payload: Buffer): HeaderBlock | undefined {
    const continuing = this.#continuing;
    if (continuing === undefined || continuing.id !== streamId)
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, "a CONTINUATION without its HEADERS");
    continuing.parts.push(Buffer.from(payload));
    continuing.bytes += payload.length;
    return this.#next(flags);
  }

  #next(flags: number): HeaderBlock | undefined {
    const block = this.#continuing;
    if (block === undefined) return undefined;
    if (block.bytes > this.maxBytes || block.parts.length > HeaderBlocks.MAX_FRAMES)
      throw new ConnectionError(
        H2_ERROR.ENHANCE_YOUR_CALM,
        `a header block over ${this.maxBytes} bytes or ${HeaderBlocks.MAX_FRAMES} frames`,
      );
    if ((flags & FLAG.END_HEADERS) === 0) return undefined;
    this.#continuing = undefined;
    const bytes = block.parts.length === 1 ? (block.parts[0] as Buffer) : Buffer.concat(block.parts);
    return { id: block.id, flags: block.flags, block: bytes };
  }
}
