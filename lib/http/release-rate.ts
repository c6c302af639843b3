/**
 * @module The load shedder's recent service rate: how many requests finished in the last RATE_WINDOW_MS, in
 * RATE_BUCKET_MS buckets (bounded: a fixed array of counts whatever the rate). Measured from the oldest
 * bucket that holds a release up to now, so a burst of releases (a group commit answering 64 sends at once)
 * counts as what it is, a stall lowers the rate as it goes on, and a spell with too few releases (idle, or a
 * stall past the window) gives no rate at all.
 */

export const RATE_BUCKET_MS = 10;
export const RATE_BUCKETS = 100;
/** The window the rate is measured over (1 s). */
export const RATE_WINDOW_MS = RATE_BUCKET_MS * RATE_BUCKETS;
/** Fewer releases than this in the window: no rate. */
export const RATE_MIN_RELEASES = 32;

export class ReleaseRate {
  readonly #counts = new Uint32Array(RATE_BUCKETS);
  /** Absolute index (time / RATE_BUCKET_MS) of the newest bucket. */
  #newest = Number.NEGATIVE_INFINITY;
  /** Releases in the window's buckets. */
  #inWindow = 0;

  /** One request finished at `now`. */
  released(now: number): void {
    this.#roll(now);
    this.#counts[slot(this.#newest)] = (this.#counts[slot(this.#newest)] ?? 0) + 1;
    this.#inWindow++;
  }

  /** The mean time (ms) between releases over the window up to `now`; undefined without enough releases. */
  msPerRelease(now: number): number | undefined {
    this.#roll(now);
    if (this.#inWindow < RATE_MIN_RELEASES) return undefined;
    for (let b = this.#newest - RATE_BUCKETS + 1; b <= this.#newest; b++) {
      if ((this.#counts[slot(b)] ?? 0) === 0) continue;
      return Math.max(RATE_BUCKET_MS, now - b * RATE_BUCKET_MS) / this.#inWindow;
    }
    return undefined;
  }

  /** Moves the window to `now`'s bucket, emptying the buckets it leaves behind. */
  #roll(now: number): void {
    const bucket = Math.floor(now / RATE_BUCKET_MS);
    if (bucket <= this.#newest) return;
    const steps = Math.min(RATE_BUCKETS, bucket - this.#newest);
    for (let i = 0; i < steps; i++) {
      const s = slot(bucket - i);
      this.#inWindow -= this.#counts[s] ?? 0;
      this.#counts[s] = 0;
    }
    this.#newest = bucket;
  }
}

const slot = (bucket: number) => ((bucket % RATE_BUCKETS) + RATE_BUCKETS) % RATE_BUCKETS;
