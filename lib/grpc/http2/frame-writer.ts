/**
 * @module The frames a connection sends, gathered over one event-loop turn and written to its socket at once
 * (one write, so one system call for the answers of many streams). While more than `HIGH_WATER` bytes wait
 * for the socket (a client that sends but does not read: pings, settings, refused streams all want answers), the
 * socket is not read, so the client's frames wait in the kernel instead of growing answers here.
 */
import type { Duplex } from "node:stream";
import { frameHeader } from "./frames.js";

const HIGH_WATER = 1024 * 1024;

export class FrameWriter {
  #output: Buffer[] = [];
  #outputBytes = 0;
  #scheduled = false;
  #closed = false;

  /**
   * `onUnsentChanged`: called once a write has left for the socket and again when the socket has taken it, so an
   * owner counting `unsentBytes` (the process's untaken answers) keeps its count current.
   */
  constructor(
    private readonly socket: Duplex,
    private readonly onUnsentChanged: () => void = () => {},
  ) {}

  frame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#closed) return;
    this.#output.push(frameHeader(payload.length, type, flags, streamId));
    if (payload.length > 0) this.#output.push(payload);
    this.#outputBytes += 9 + payload.length;
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
    this.#outputBytes = 0;
    this.socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out), this.onUnsentChanged);
    this.onUnsentChanged();
    if (this.socket.writableLength > HIGH_WATER && !this.socket.isPaused()) {
      this.socket.pause();
      this.socket.once("drain", () => this.socket.resume());
    }
  }

  /** Bytes framed and not yet taken by the client: gathered for this turn's write, or waiting in the socket. */
  get unsentBytes(): number {
    return this.#outputBytes + this.socket.writableLength;
  }

  /** Nothing more is written. */
  close(): void {
    this.#closed = true;
    this.#output = [];
    this.#outputBytes = 0;
  }
}
