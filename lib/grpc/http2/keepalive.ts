/**
 * @module A connection's keepalive: when nothing has come from the client for `everyMs`, it is pinged; a ping
 * unanswered (nothing heard) for `timeoutMs` drops the connection. One unref'd timer per connection.
 */
export class Keepalive {
  #heardAt = Date.now();
  #pingedAt = 0;
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(everyMs: number, timeoutMs: number, ping: () => void, drop: () => void) {
    if (everyMs <= 0) return;
    this.#timer = setInterval(
      () => {
        const now = Date.now();
        if (this.#pingedAt > 0) {
          if (now - this.#pingedAt > timeoutMs) drop();
        } else if (now - this.#heardAt >= everyMs) {
          this.#pingedAt = now;
          ping();
        }
      },
      Math.max(1000, Math.min(everyMs, timeoutMs) / 2),
    );
    this.#timer.unref();
  }

  /** Something came from the client. */
  heard(): void {
    this.#heardAt = Date.now();
    this.#pingedAt = 0;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
