/**
 * @module gRPC's length-prefixed messages (a flag byte, a 32-bit length, the bytes) out of a stream's DATA
 * payloads, however they were cut. A message's parts are kept as they come and joined once, when it is
 * complete: each byte is copied at most twice whatever the number of frames. A length over the limit is
 * refused before its bytes are kept.
 */

/** One message as sent: compressed (flag 1) or not, and its bytes. */
export interface FramedMessage {
  compressed: boolean;
  bytes: Buffer;
}

export class MessageTooLarge extends Error {
  override readonly name = "MessageTooLarge";
}

export class MessageFrames {
  #parts: Buffer[] = [];
  #bytes = 0;
  /** The whole size (prefix included) of the message being gathered; -1 before its prefix is in. */
  #expected = -1;

  constructor(private readonly maxMessageBytes: number) {}

  /** Bytes kept for a message not complete yet. */
  get pendingBytes(): number {
    return this.#bytes;
  }

  /** Takes `chunk`; calls `onMessage` for each message it completes while `more()` holds. */
  push(chunk: Buffer, onMessage: (message: FramedMessage) => void, more: () => boolean): void {
    this.#parts.push(chunk);
    this.#bytes += chunk.length;
    while (more()) {
      if (this.#expected < 0) {
        if (this.#bytes < 5) break;
        if ((this.#parts[0] as Buffer).length < 5) this.#parts = [Buffer.concat(this.#parts, this.#bytes)];
        const length = (this.#parts[0] as Buffer).readUInt32BE(1);
        if (length > this.maxMessageBytes)
          throw new MessageTooLarge(`Received message larger than max (${length} vs. ${this.maxMessageBytes})`);
        this.#expected = 5 + length;
      }
      if (this.#bytes < this.#expected) break;
      const all = this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts, this.#bytes);
      const message = all.subarray(0, this.#expected);
      const rest = all.subarray(this.#expected);
      this.#parts = rest.length > 0 ? [rest] : [];
      this.#bytes = rest.length;
      this.#expected = -1;
      onMessage({ compressed: message[0] === 1, bytes: message.subarray(5) });
    }
    // What is kept past this call is copied: a frame's bytes are a view of the connection's read buffer.
    const last = this.#parts.length - 1;
    if (last >= 0) this.#parts[last] = Buffer.from(this.#parts[last] as Buffer);
  }
}
