/**
 * @module Load shedding on the request path: at most `maxInFlight` requests run their route at once; the
 * others wait their turn in arrival order, and one that has waited longer than `maxWaitMs` (since it
 * arrived) is answered SYSTEM_BUSY at once, before its route runs, so nothing of it is written — as
 * RocketMQ's broker answers a send that waited over `waitTimeMillsInSendQueue` (200 ms) in its queue. A
 * request that finds a free slot with nobody waiting always runs. A request that would have to wait is refused
 * on arrival, before it joins the line, when the line is already as long as the broker's service rate drains in
 * `maxExpectedWaitMs` (or is `maxWaiting` long): under overload the broker answers the excess at once instead of
 * holding every client's connection for the whole bound (a line that is always full to the bound makes every
 * admitted request wait the bound). The service rate is measured while every slot was taken (release-rate.ts),
 * never over spells with free slots, where releases follow the arrivals: a burst after a quiet spell is served as
 * far as the broker's pace drains it, not refused at the quiet spell's pace. Reads (GET, HEAD: health, admin) never wait here. A running
 * request that waits for an event (a long-polled receive) gives its slot back while it waits (`parkWhile`, as
 * RocketMQ's suspended pull requests hold no thread) and takes a turn again once woken.
 * With a lag source (the local server's event loop, loop-lag.ts), a request arriving while the loop runs more than
 * `maxLagMs` late and other requests are in progress is refused on arrival too, free slot or not: it has already waited that long unseen (in the
 * kernel and the loop's queue), and refusing the excess at once, cheaply, shortens the turns until the admitted
 * requests meet their bound again; once the lag is back under the bound, requests are admitted again.
 * The SDK's transport backs off and sends such a refusal again (lib/client/transport/http-transport.ts).
 */
import { ErrorCode, NimbusError, SHED_MARK } from "../core/errors.js";
import { ReleaseRate } from "./release-rate.js";

export { RATE_MIN_RELEASES, RATE_WINDOW_MS } from "./release-rate.js";

export interface LoadSheddingOptions {
  /** Requests running their route at once; more wait. Default 64. */
  maxInFlight?: number | undefined;
  /** A request that waited longer than this since it arrived is refused with SYSTEM_BUSY. Default 200 ms. */
  maxWaitMs?: number | undefined;
  /** Requests waiting at once; past it SYSTEM_BUSY at once. Default 4 x maxInFlight. */
  maxWaiting?: number | undefined;
  /**
   * A request that must wait is refused on arrival when the line ahead of it would take longer than this to
   * drain at the rate requests finished while every slot was taken, over the last second (release-rate.ts; with
   * fewer than RATE_MIN_RELEASES such releases there is no rate, and only `maxWaiting` and `maxWaitMs` apply). Default maxWaitMs / 10 (20 ms): a line
   * longer than that only holds clients' connections, which a client with a bounded pool then waits for (the
   * overload benchmark, docs/benchmarks/http-clients.md: at a quarter, 256 connections were all held and the p99 of all
   * answers was 1.6 s; at a tenth, 137 ms).
   */
  maxExpectedWaitMs?: number | undefined;
  /**
   * The refusal on the expected wait applies to a standing line only: one that has not emptied for this long. A
   * line that formed more recently is a burst (a client's connections catching up after a pause), which joins the
   * line and is served within `maxWaitMs` and `maxWaiting`, as RocketMQ's send queue serves what waited under its
   * bound; under a sustained overload the line never empties, and the excess is refused on arrival as before (the
   * first `standingLineMs` of it wait at most `maxWaiting` turns). Default maxWaitMs / 2 (100 ms); 0 refuses bursts too.
   */
  standingLineMs?: number | undefined;
  /**
   * How late the event loop runs now (ms): a request arriving while it is over `maxLagMs`, with other requests in
   * progress, is refused on arrival. Default none (no such refusal: a Lambda container serves one request at a time).
   */
  lagMs?: (() => number) | undefined;
  /** The event-loop lag past which new requests are refused on arrival. Default maxWaitMs / 4 (50 ms). */
  maxLagMs?: number | undefined;
  /** Monotonic clock (ms), for tests. Default `performance.now`. */
  now?: (() => number) | undefined;
  /**
   * Runs `expire` after `ms` (so a request past its wait bound is answered then, not when a turn comes);
   * returns a canceller. Default `setTimeout`; tests driving `now` pass one that never fires.
   */
  schedule?: ((expire: () => void, ms: number) => () => void) | undefined;
}

export const DEFAULT_MAX_IN_FLIGHT_REQUESTS = 64;
export const DEFAULT_MAX_WAIT_MS = 200;

interface Waiter {
  arrivedAt: number;
  admit: () => void;
  refuse: (err: NimbusError) => void;
  cancel: () => void;
}

const scheduleTimer = (expire: () => void, ms: number) => {
  const timer = setTimeout(expire, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export class LoadShedder {
  readonly maxInFlight: number;
  readonly maxWaitMs: number;
  readonly maxWaiting: number;
  readonly maxExpectedWaitMs: number;
  readonly standingLineMs: number;
  readonly maxLagMs: number;
  readonly #lagMs: (() => number) | undefined;
  readonly #now: () => number;
  readonly #schedule: (expire: () => void, ms: number) => () => void;
  #running = 0;
  readonly #waiting: Waiter[] = [];
  /** When the line waiting now formed (its first waiter joined an empty line); meaningless while it is empty. */
  #lineSince = 0;
  /** Requests finished while every slot was taken, over the last second: the service rate. */
  readonly #rate = new ReleaseRate();
  /** Requests refused so far (for tests, the benchmark and the health answer). */
  refused = 0;
  /** Refusals answered by the expiry timer: a waiter whose bound passed while no slot came free. */
  expired = 0;
  /** Refusals on arrival because the event loop ran more than `maxLagMs` late. */
  lagged = 0;
  #parked = 0;

  constructor(options: LoadSheddingOptions = {}) {
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT_REQUESTS;
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.maxWaiting = options.maxWaiting ?? 4 * this.maxInFlight;
    this.maxExpectedWaitMs = options.maxExpectedWaitMs ?? this.maxWaitMs / 10;
    this.standingLineMs = options.standingLineMs ?? this.maxWaitMs / 2;
    this.maxLagMs = options.maxLagMs ?? this.maxWaitMs / 4;
    this.#lagMs = options.lagMs;
    this.#now = options.now ?? (() => performance.now());
    this.#schedule = options.schedule ?? scheduleTimer;
    if (
      !(
        this.maxInFlight >= 1 &&
        this.maxWaitMs >= 0 &&
        this.maxWaiting >= 0 &&
        this.maxExpectedWaitMs >= 0 &&
        this.standingLineMs >= 0 &&
        this.maxLagMs >= 0
      )
    ) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "load shedding needs maxInFlight >= 1 and bounds >= 0");
    }
  }

  /** Now on the shedder's clock: what a transport stamps as a request's arrival. */
  now(): number {
    return this.#now();
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Requests waiting for an event without a slot (`parkWhile`). */
  get parked(): number {
    return this.#parked;
  }

  /**
   * Frees the slot of a running request (`release`) while `wait` runs, then waits for a turn again as a request
   * arriving now (SYSTEM_BUSY past the bound, as any other); answers what `wait` answered and the new release.
   * A `wait` that throws takes no turn. How many may park is the caller's bound (the long polls' own).
   */
  async parkWhile<T>(release: () => void, wait: () => Promise<T>): Promise<{ value: T; release: () => void }> {
    release();
    this.#parked++;
    let value: T;
    try {
      value = await wait();
    } finally {
      this.#parked--;
    }
    return { value, release: await this.enter() };
  }

  /**
   * Waits for a turn for a request that arrived at `arrivedAt` (default now) and answers the release to
   * call when it is done; throws SYSTEM_BUSY, without running anything, when it waited too long or the line
   * is full.
   */
  async enter(arrivedAt = this.#now()): Promise<() => void> {
    // A free slot and nobody ahead: it runs, however long ago it arrived. Only time spent in line counts, as
    // only a request in RocketMQ's send queue is cleaned: a slow body or a descheduled process is no overload.
    if (this.#running < this.maxInFlight && this.#waiting.length === 0) return this.#start();
    this.#checkWait(arrivedAt);
    // The line's own rules only: the loop's lag is asked once, on arrival (the local server asks before it reads
    // a body), not again for a request already read or a parked one woken.
    const refused = this.#lineRefusal();
    if (refused !== undefined) throw new NimbusError(ErrorCode.SYSTEM_BUSY, refused);
    await new Promise<void>((admit, refuse) => {
      const waiter: Waiter = { arrivedAt, admit, refuse, cancel: () => undefined };
      const left = Math.max(0, arrivedAt + this.maxWaitMs - this.#now());
      waiter.cancel = this.#schedule(() => this.#expire(waiter), left + 1);
      if (this.#waiting.length === 0) this.#lineSince = this.#now();
      this.#waiting.push(waiter);
    });
    return this.#release();
  }

  /**
   * Why a request arriving now is refused (SYSTEM_BUSY) before it joins the line (the event loop lags past
   * `maxLagMs`, the line is full, or it would wait longer than `maxExpectedWaitMs`), counted as refused; undefined
   * when it would run or wait. A message, no error object built (no stack trace taken): the local server asks before
   * it reads a body and writes the answer itself, so a refusal under overload costs as little as it can.
   * `lagApplies`: whether the loop's lag may refuse this request (the local server asks it for sends only: a
   * receive, pull, ack or commit refused would only move work later, or make it again as a redelivery).
   */
  arrivalRefusal(lagApplies = true): string | undefined {
    // Only while other requests are in progress: a lone request that made the loop late (a large pull) has no
    // pile behind it, and the client's next request is served.
    const busy = this.#running > 0 || this.#waiting.length > 0;
    const lag = busy && lagApplies ? this.#lagMs?.() : undefined;
    if (lag !== undefined && lag > this.maxLagMs) {
      this.lagged++;
      return this.#busyMessage(`the event loop runs ${Math.round(lag)} ms late`);
    }
    return this.#lineRefusal();
  }

  /**
   * The line is full, or it has stood for `standingLineMs` and a request joining it would wait longer than
   * `maxExpectedWaitMs`: the refusal's message.
   */
  #lineRefusal(): string | undefined {
    if (this.#running < this.maxInFlight && this.#waiting.length === 0) return undefined;
    if (this.#waiting.length >= this.maxWaiting)
      return this.#busyMessage(`${this.#waiting.length} requests are waiting`);
    const expected = this.expectedWaitMs();
    if (expected === undefined || expected <= this.maxExpectedWaitMs) return undefined;
    // A line that formed within `standingLineMs` (or forms with this request) is a burst: it waits.
    if (this.#waiting.length === 0 || this.#now() - this.#lineSince < this.standingLineMs) return undefined;
    return this.#busyMessage(`${this.#waiting.length} requests are waiting, about ${Math.round(expected)} ms of work`);
  }

  /**
   * How long a request joining the line now would wait for its turn: the line ahead of it and itself, each
   * taking the time the slots were all busy per release over the last second (measured up to now, so a stall
   * counts); undefined when there is no such rate (release-rate.ts).
   */
  expectedWaitMs(): number | undefined {
    const perTurn = this.#rate.msPerRelease(this.#now());
    return perTurn === undefined ? undefined : (this.#waiting.length + 1) * perTurn;
  }

  #start(): () => void {
    this.#running++;
    this.#markSaturation();
    return this.#release();
  }

  /** Tells the service rate whether every slot is taken now. */
  #markSaturation(): void {
    this.#rate.mark(this.#now(), this.#running >= this.maxInFlight);
  }

  /** A release callable once: frees the slot and hands it to the next waiter still within its bound. */
  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.#running >= this.maxInFlight) this.#rate.released(this.#now());
      this.#running--;
      this.#next();
      this.#markSaturation();
    };
  }

  #next(): void {
    while (this.#running < this.maxInFlight) {
      const waiter = this.#waiting.shift();
      if (waiter === undefined) return;
      waiter.cancel();
      if (this.#now() - waiter.arrivedAt > this.maxWaitMs) {
        waiter.refuse(this.#waited(waiter.arrivedAt));
        continue;
      }
      this.#running++;
      waiter.admit();
    }
  }

  #expire(waiter: Waiter): void {
    const at = this.#waiting.indexOf(waiter);
    if (at < 0) return;
    const left = waiter.arrivedAt + this.maxWaitMs - this.#now();
    // A timer may fire a little early (its clock and ours differ): wait the rest, never leave the waiter unwatched.
    if (left >= 0) {
      waiter.cancel = this.#schedule(() => this.#expire(waiter), left + 1);
      return;
    }
    this.#waiting.splice(at, 1);
    this.expired++;
    waiter.refuse(this.#waited(waiter.arrivedAt));
  }

  #checkWait(arrivedAt: number): void {
    if (this.#now() - arrivedAt > this.maxWaitMs) throw this.#waited(arrivedAt);
  }

  #waited(arrivedAt: number): NimbusError {
    return this.#busy(`the request waited ${Math.round(this.#now() - arrivedAt)} ms for its turn`);
  }

  #busy(why: string): NimbusError {
    return new NimbusError(ErrorCode.SYSTEM_BUSY, this.#busyMessage(why));
  }

  #busyMessage(why: string): string {
    this.refused++;
    return `${SHED_MARK} broker busy: ${why} (bound ${this.maxWaitMs} ms, ${this.maxInFlight} at once); try again`;
  }
}
