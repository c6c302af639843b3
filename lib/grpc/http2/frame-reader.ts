/**
 * @module A client's bytes as frames: the connection preface first (RFC 9113 §3.4), then each complete frame in
 * order, however the bytes were cut into reads. A frame longer than the 16 KiB a server takes by default is a
 * FRAME_SIZE_ERROR; bytes that are not the preface are `"not-http2"`.
 */
import { CLIENT_PREFACE, ConnectionError, DEFAULT_MAX_FRAME, H2_ERROR } from "./frames.js";

export type FrameListener = (type: number, flags: number, streamId: number, payload: Buffer) => void;

const EMPTY = Buffer.alloc(0);

export class FrameReader {
  #input: Buffer = EMPTY;
  #prefaceSeen = false;

  constructor(private readonly onFrame: FrameListener) {}

  /**
   * Gives the frames completed by `chunk` to the listener, while `more()` holds; "not-http2" when the client did
   * not open with the preface. Throws what the listener throws.
   */
  read(chunk: Buffer, more: () => boolean): "ok" | "not-http2" {
    let input = this.#input.length === 0 ? chunk : Buffer.concat([this.#input, chunk]);
    if (!this.#prefaceSeen) {
      const seen = Math.min(input.length, CLIENT_PREFACE.length);
      if (!input.subarray(0, seen).equals(CLIENT_PREFACE.subarray(0, seen))) return "not-http2";
      if (seen < CLIENT_PREFACE.length) {
        this.#input = input;
        return "ok";
      }
      this.#prefaceSeen = true;
      input = input.subarray(CLIENT_PREFACE.length);
    }
    let at = 0;
    while (input.length - at >= 9 && more()) {
      const length = ((input[at] ?? 0) << 16) | ((input[at + 1] ?? 0) << 8) | (input[at + 2] ?? 0);
      if (length > DEFAULT_MAX_FRAME)
        throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, `a frame of ${length} bytes`);
      if (input.length - at < 9 + length) break;
      const payload = input.subarray(at + 9, at + 9 + length);
      const type = input[at + 3] ?? 0;
      const flags = input[at + 4] ?? 0;
      const streamId = input.readUInt32BE(at + 5) & 0x7fffffff;
      at += 9 + length;
      this.onFrame(type, flags, streamId, payload);
    }
    // Kept bytes are copied: the socket's chunk may be reused.
    this.#input = at === input.length ? EMPTY : Buffer.from(input.subarray(at));
    return "ok";
  }
}
