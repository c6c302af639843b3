/**
 * @module The frames a connection sends, gathered over one event-loop turn and written to its socket at once
 * (one write, so one system call for the answers of many streams).
 */
import type { Duplex } from "node:stream";
import { frameHeader } from "./frames.js";

export class FrameWriter {
  #output: Buffer[] = [];
  #scheduled = false;
  #closed = false;

  constructor(private readonly socket: Duplex) {}

  frame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#closed) return;
    this.#output.push(frameHeader(payload.length, type, flags, streamId));
    if (payload.length > 0) this.#output.push(payload);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes what is gathered now. */
  flush(): void {
    this.#scheduled = false;
    const out = this.#output;
    if (out.length === 0 || this.#closed) return;
    this.#output = [];
    this.socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
  }

  /** Nothing more is written. */
  close(): void {
    this.#closed = true;
    this.#output = [];
  }
}
