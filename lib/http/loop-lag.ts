/**
 * @module How late this process's event loop runs: what a request that arrives now has waited, unseen, in the
 * kernel's socket buffers and the loop's queue before any of our code ran. When the CPU is saturated the loop's
 * turns grow long (each handles every request that piled up during the last), and a request's own age cannot be
 * read from it: the shedder's line only sees it once parsed. The probe is one timer: it is due every
 * LAG_PROBE_INTERVAL_MS and measures how late it fired. The lag now is the larger of the last lateness measured
 * and how late the next probe already is (a turn still running counts as it goes on). The probe runs only while
 * requests arrive: one that finds no request since the last fire stops, so an idle broker never wakes for it.
 */

/** How often the probe is due while requests arrive (ms). */
export const LAG_PROBE_INTERVAL_MS = 10;

export class LoopLag {
  readonly #intervalMs: number;
  readonly #now: () => number;
  /** When the pending probe is due (on `now`'s clock), or undefined: no probe pending. */
  #dueAt: number | undefined;
  #lastLagMs = 0;
  #askedSinceFire = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Probes fired so far (for tests: a fire is the step they wait for). */
  fired = 0;

  constructor(options: { intervalMs?: number | undefined; now?: (() => number) | undefined } = {}) {
    this.#intervalMs = options.intervalMs ?? LAG_PROBE_INTERVAL_MS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The loop's lag now (ms, >= 0); starts the probe when none runs (a request is arriving). */
  lagMs(): number {
    this.#askedSinceFire = true;
    const now = this.#now();
    if (this.#dueAt === undefined) {
      this.#arm(now);
      return 0;
    }
    return Math.max(this.#lastLagMs, now - this.#dueAt);
  }

  /** Whether a probe is pending (requests arrived since the last fire, or it just started). */
  get probing(): boolean {
    return this.#dueAt !== undefined;
  }

  /** Stops the probe (the server closes). */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#dueAt = undefined;
  }

  #arm(now: number): void {
    this.#askedSinceFire = false;
    this.#dueAt = now + this.#intervalMs;
    this.#timer = setTimeout(() => this.#fire(), this.#intervalMs);
    this.#timer.unref();
  }

  #fire(): void {
    const now = this.#now();
    this.fired++;
    this.#lastLagMs = Math.max(0, now - (this.#dueAt ?? now));
    this.#timer = undefined;
    if (this.#askedSinceFire) {
      this.#arm(now);
      return;
    }
    // No request since the last fire: the loop is idle enough, the probe stops until the next request.
    this.#dueAt = undefined;
    this.#lastLagMs = 0;
  }
}
