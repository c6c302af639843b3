/**
 * @module The load shedder's service rate: how fast its line drains when every slot is taken. It counts the
 * requests that finished while all slots were busy and the time the slots were all busy, over the last
 * RATE_WINDOW_MS, in RATE_BUCKET_MS buckets (bounded: a fixed array whatever the rate). A spell with free slots
 * says nothing about how fast a line would drain (releases then follow arrivals, not the broker's pace: a quiet
 * second with one request every 30 ms is no 30 ms service time), so it counts neither releases nor time: a burst
 * after a quiet spell meets the rate of the last busy spell, or none. The busy time is counted up to now, so a
 * stall (all slots taken, nothing finishing) lowers the rate as it goes on; too few busy releases in the window
 * (never saturated, or a stall past the window) give no rate at all.
 */

export const RATE_BUCKET_MS = 10;
export const RATE_BUCKETS = 100;
/** The window the rate is measured over (1 s). */
export const RATE_WINDOW_MS = RATE_BUCKET_MS * RATE_BUCKETS;
/** Fewer releases than this while all slots were busy, in the window: no rate. */
export const RATE_MIN_RELEASES = 32;

export class ReleaseRate {
  readonly #counts = new Uint32Array(RATE_BUCKETS);
  /** Time (ms) all slots were busy, by bucket. */
  readonly #busyMs = new Float64Array(RATE_BUCKETS);
  /** Absolute index (time / RATE_BUCKET_MS) of the newest bucket. */
  #newest = Number.NEGATIVE_INFINITY;
  /** Busy releases in the window's buckets. */
  #inWindow = 0;
  /** Whether all slots are busy now, and since when the busy time is counted. */
  #saturated = false;
  #markedAt = 0;

  /**
   * Whether every slot is taken from `now` on: called whenever that may change. A busy spell's time is counted
   * into the bucket of the moment it is marked (a spell longer than the window counts as the window).
   */
  mark(now: number, saturated: boolean): void {
    this.#roll(now);
    if (this.#saturated) {
      const s = slot(this.#newest);
      this.#busyMs[s] = (this.#busyMs[s] ?? 0) + Math.min(RATE_WINDOW_MS, Math.max(0, now - this.#markedAt));
    }
    this.#saturated = saturated;
    this.#markedAt = now;
  }

  /** One request finished at `now` while every slot was taken. */
  released(now: number): void {
    this.mark(now, this.#saturated);
    this.#counts[slot(this.#newest)] = (this.#counts[slot(this.#newest)] ?? 0) + 1;
    this.#inWindow++;
  }

  /** The busy time (ms) per busy release over the window up to `now`; undefined without enough of them. */
  msPerRelease(now: number): number | undefined {
    this.mark(now, this.#saturated);
    if (this.#inWindow < RATE_MIN_RELEASES) return undefined;
    let busy = 0;
    for (const ms of this.#busyMs) busy += ms;
    return busy / this.#inWindow;
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
      this.#busyMs[s] = 0;
    }
    this.#newest = bucket;
  }
}

const slot = (bucket: number) => ((bucket % RATE_BUCKETS) + RATE_BUCKETS) % RATE_BUCKETS;
