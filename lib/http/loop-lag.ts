/**
 * @module How late this process's event loop runs because of its own work: what a request that arrives now has
 * waited, unseen, in the kernel's socket buffers and the loop's queue before any of our code ran. When the CPU is
 * saturated the loop's turns grow long (each handles every request that piled up during the last), and a request's
 * own age cannot be read from it: the shedder's line only sees it once parsed. The probe is one timer: it is due
 * every LAG_PROBE_INTERVAL_MS and measures how late it fired. The lag now is the larger of the last lateness
 * measured and how late the next probe already is (a turn still running counts as it goes on).
 *
 * Only the process's own share counts: each lateness is scaled by the CPU time the process used over the probe's
 * span (its busy share, at most 1). A process that was not running (the OS gave the core to another) is late too,
 * but refusing requests would not shorten its turns: on a shared machine that lag is not overload of its own.
 * The probe runs only while requests arrive: one that finds no request since the last fire stops, so an idle
 * broker never wakes for it.
 */

/** How often the probe is due while requests arrive (ms). */
export const LAG_PROBE_INTERVAL_MS = 10;

/** The process's CPU time so far (ms): user and system, all its threads. */
const processCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

export interface LoopLagOptions {
  intervalMs?: number | undefined;
  /** Monotonic wall clock (ms), for tests. Default `performance.now`. */
  now?: (() => number) | undefined;
  /** The process's CPU time so far (ms), for tests. Default `process.cpuUsage`. */
  cpuMs?: (() => number) | undefined;
}

export class LoopLag {
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #cpuMs: () => number;
  /** When the pending probe is due (on `now`'s clock), or undefined: no probe pending. */
  #dueAt: number | undefined;
  /** When the pending probe was armed, and the process's CPU time then. */
  #armedAt = 0;
  #cpuAtArm = 0;
  #lastLagMs = 0;
  /** The process's busy share over the last probe's span (0..1). */
  #busy = 1;
  #askedSinceFire = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Probes fired so far (for tests: a fire is the step they wait for). */
  fired = 0;

  constructor(options: LoopLagOptions = {}) {
    this.#intervalMs = options.intervalMs ?? LAG_PROBE_INTERVAL_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#cpuMs = options.cpuMs ?? processCpuMs;
  }

  /** The loop's own lag now (ms, >= 0); starts the probe when none runs (a request is arriving). */
  lagMs(): number {
    this.#askedSinceFire = true;
    const now = this.#now();
    if (this.#dueAt === undefined) {
      this.#arm(now);
      return 0;
    }
    return Math.max(this.#lastLagMs, (now - this.#dueAt) * this.#busy);
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
    this.#armedAt = now;
    this.#cpuAtArm = this.#cpuMs();
    this.#dueAt = now + this.#intervalMs;
    this.#timer = setTimeout(() => this.#fire(), this.#intervalMs);
    this.#timer.unref();
  }

  #fire(): void {
    const now = this.#now();
    this.fired++;
    const span = now - this.#armedAt;
    this.#busy = span > 0 ? Math.min(1, Math.max(0, (this.#cpuMs() - this.#cpuAtArm) / span)) : 1;
    this.#lastLagMs = Math.max(0, now - (this.#dueAt ?? now)) * this.#busy;
    this.#timer = undefined;
    if (this.#askedSinceFire) {
      this.#arm(now);
      return;
    }
    // No request since the last fire: the loop is idle enough, the probe stops until the next request.
    this.#dueAt = undefined;
    this.#lastLagMs = 0;
    this.#busy = 1;
  }
}
