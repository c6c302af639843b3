/**
 * @module Hedged object PUTs: when a PUT to a store whose latency is per request (S3: a slow request is
 * usually one slow path, and the same request sent again most likely takes another) is still out after the
 * recent PUTs' `quantile` duration, the same bytes go out again under the same key, and the first to succeed
 * answers ("The Tail at Scale", Dean and Barroso; S3's guidance on retrying latency-sensitive requests). The
 * key names immutable bytes (a fresh key per object, shared-objects.ts), so both PUTs store the same object
 * and a reader sees either. A token bucket holds the second PUTs to `budget` of the PUTs, so a store slow for
 * everyone is not sent twice the load. See docs/queue-log.md ("Hedged PUTs").
 */
import type { ObjectStore } from "../../storage/object-store.js";

export interface HedgeOptions {
  /** A second PUT goes out when the first is slower than this share of recent PUTs. Default 0.8. */
  quantile?: number | undefined;
  /** At most this share of PUTs get a second one (a token bucket). Default 0.25. */
  budget?: number | undefined;
  /** Monotonic clock (ms) timing the PUTs, for tests. Default `performance.now`. */
  now?: (() => number) | undefined;
}

/** Recent PUT durations kept (a ring): the hedge's delay is their `quantile`. */
const SAMPLES = 256;
/** Fewer recent durations than this (a cold process): no second PUTs. */
const MIN_SAMPLES = 16;
/** The delay is recomputed after this many new durations (a sort of at most `SAMPLES`). */
const RECOMPUTE_EVERY = 16;
/** The most second PUTs a burst after a quiet stretch may send at once (the bucket's size). */
const MAX_TOKENS = 8;

export class HedgedPuts {
  readonly #objects: ObjectStore;
  readonly #quantile: number;
  readonly #budget: number;
  readonly #now: () => number;
  /** Every PUT not answered yet, a loser's too (at most two per object written, `settled` waits for them). */
  readonly #out = new Set<Promise<void>>();
  readonly #durations = new Float64Array(SAMPLES);
  #recorded = 0;
  #delayMs: number | undefined;
  #tokens = 0;
  /** Objects written (one PUT each), and second PUTs sent beside slow ones (for tests). */
  writes = 0;
  hedges = 0;

  constructor(objects: ObjectStore, options: HedgeOptions = {}) {
    this.#objects = objects;
    this.#quantile = options.quantile ?? 0.8;
    this.#budget = options.budget ?? 0.25;
    this.#now = options.now ?? (() => performance.now());
    if (!(this.#quantile > 0 && this.#quantile < 1)) throw new RangeError("hedge quantile must be in (0, 1)");
    if (!(this.#budget >= 0 && this.#budget <= 1)) throw new RangeError("hedge budget must be in [0, 1]");
  }

  /** The delay after which a second PUT goes out, in ms; undefined while too few PUTs were timed. */
  get delayMs(): number | undefined {
    return this.#delayMs;
  }

  /** Stores `body` under `key`: answers when one PUT of it succeeded, fails when every PUT sent failed. */
  put(key: string, body: Uint8Array): Promise<void> {
    this.writes++;
    if (this.#objects.hedgePuts !== true) return this.#timed(key, body);
    this.#tokens = Math.min(MAX_TOKENS, this.#tokens + this.#budget);
    const delayMs = this.#delayMs;
    if (delayMs === undefined || this.#budget === 0) return this.#timed(key, body);
    return new Promise<void>((resolve, reject) => {
      let out = 1;
      let settled = false;
      let firstError: unknown;
      const timer = setTimeout(() => {
        if (settled || this.#tokens < 1) return;
        this.#tokens -= 1;
        this.hedges++;
        out++;
        attempt();
      }, delayMs);
      const attempt = () =>
        this.#timed(key, body).then(
          () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve();
          },
          (err: unknown) => {
            firstError ??= err;
            out--;
            // Another PUT of the same bytes is still out: its answer is the answer.
            if (settled || out > 0) return;
            settled = true;
            clearTimeout(timer);
            reject(firstError);
          },
        );
      attempt();
    });
  }

  /** Answers once every PUT sent so far has answered (a process stopping writes nothing after it). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#out]);
  }

  /** One PUT, its duration remembered when it succeeds (a late loser's too: it is a sample of the store). */
  #timed(key: string, body: Uint8Array): Promise<void> {
    const started = this.#now();
    const put = this.#objects.put(key, body).then(() => this.#record(this.#now() - started));
    this.#out.add(put);
    const forget = () => void this.#out.delete(put);
    put.then(forget, forget);
    return put;
  }

  #record(ms: number): void {
    this.#durations[this.#recorded % SAMPLES] = ms;
    this.#recorded++;
    if (this.#recorded >= MIN_SAMPLES && this.#recorded % RECOMPUTE_EVERY === 0) {
      const recent = this.#durations.slice(0, Math.min(this.#recorded, SAMPLES)).sort();
      this.#delayMs = recent[Math.min(recent.length - 1, Math.floor(this.#quantile * recent.length))];
    }
  }
}
