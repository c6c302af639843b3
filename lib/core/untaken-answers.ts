/**
 * @module The bytes of answers a process has written that their clients have not taken yet, across every connection
 * of its gRPC and remoting doors: answers waiting for a client's HTTP/2 windows, and answers in sockets their
 * clients do not read. Each door bounds them per connection; this bounds their sum, so that many connections each
 * within their own bound cannot hold the process's memory. Past it, new requests are refused at once (before any
 * work) and the largest holder is closed, and an answer past it is not queued: the gRPC door resets its stream, the
 * remoting door answers SYSTEM_BUSY in place of a large one (docs/grpc.md, docs/remoting.md).
 */

/** Untaken answer bytes a process holds at most, by default: above one connection's bound (224 MiB on gRPC). */
export const DEFAULT_MAX_UNTAKEN_ANSWER_BYTES = 512 * 1024 * 1024;

/** What a request refused for the process's untaken answers is told (SYSTEM_BUSY, RESOURCE_EXHAUSTED). */
export const UNTAKEN_ANSWERS_FULL = "the broker holds too many answers its clients have not taken; retry";

/** An answer at most this long may pass a bound by an eighth of it (see `roomFor`). */
export const SMALL_ANSWER_BYTES = 65_536;

/**
 * The bound an answer of `bytes` is held to: `max`, or an eighth more for a small one (an ack's answer, a
 * Telemetry command, a SYSTEM_BUSY), so that a large answer still draining does not cut a client's other calls short.
 */
export function roomFor(max: number, bytes: number): number {
  return bytes <= SMALL_ANSWER_BYTES ? max * (9 / 8) : max;
}

/** The process's ledger: each connection keeps its own share of it current. */
export class UntakenAnswers {
  #held = 0;
  readonly #shares = new Set<AnswerShare>();

  /** The least share whose connection is closed past the bound: an eighth of the bound, at most 1 MiB. */
  readonly minShedBytes: number;

  constructor(readonly maxBytes: number) {
    this.minShedBytes = Math.min(maxBytes / 8, 1024 * 1024);
  }

  /** Untaken answer bytes of every connection, as each last counted its own. */
  get held(): number {
    return this.#held;
  }

  /** A connection's share, zero until it counts; `shed` closes the connection (`shedLargest`). */
  share(shed?: () => void): AnswerShare {
    const share = new AnswerShare(this, shed);
    this.#shares.add(share);
    return share;
  }

  /** A share's count moved by `delta` (AnswerShare.set). */
  moved(delta: number): void {
    this.#held += delta;
  }

  /** A share's connection is gone (AnswerShare.release). */
  forget(share: AnswerShare): void {
    this.#shares.delete(share);
  }

  /**
   * Past the bound, the connection holding the largest share is closed, when that share is at least `minShedBytes`
   * and no connection is being closed for it already: clients that take nothing cannot keep every client's new
   * requests refused, one closed after another while the bound is passed. O(connections), only past the bound.
   */
  shedLargest(): void {
    let largest: AnswerShare | undefined;
    for (const share of this.#shares) {
      if (share.shedding) return;
      if (share.closable && share.counted >= this.minShedBytes && share.counted > (largest?.counted ?? 0))
        largest = share;
    }
    largest?.shed();
  }
}

/** One connection's part of the ledger: set to what it holds untaken whenever that changes, released when it ends. */
export class AnswerShare {
  #counted = 0;
  /** Its connection is being closed to give its share back (`UntakenAnswers.shedLargest`). */
  shedding = false;

  constructor(
    private readonly ledger: UntakenAnswers,
    private readonly close: (() => void) | undefined,
  ) {}

  get counted(): number {
    return this.#counted;
  }

  /** Whether the ledger can close its connection. */
  get closable(): boolean {
    return this.close !== undefined;
  }

  /** The connection now holds `bytes` untaken; returns them. */
  set(bytes: number): number {
    if (bytes !== this.#counted) {
      this.ledger.moved(bytes - this.#counted);
      this.#counted = bytes;
    }
    return bytes;
  }

  /** Whether `bytes` more fit under the process's bound (`roomFor`), the connection's share counted as last set. */
  fits(bytes: number): boolean {
    return this.ledger.held + bytes <= roomFor(this.ledger.maxBytes, bytes);
  }

  /**
   * Whether the process's untaken answers are past its bound: new requests are refused until they are not, and the
   * largest holder is closed (`shedLargest`).
   */
  full(): boolean {
    if (this.ledger.held <= this.ledger.maxBytes) return false;
    this.ledger.shedLargest();
    return true;
  }

  /** Closes the connection for the ledger (once; a share without a way to close it is left). */
  shed(): void {
    if (this.close === undefined || this.shedding) return;
    this.shedding = true;
    this.close();
  }

  /** The connection is gone: its share is given back. */
  release(): void {
    this.set(0);
    this.ledger.forget(this);
  }
}

/** The ledger of this process's doors, unless a server is given its own. */
export const PROCESS_UNTAKEN_ANSWERS = new UntakenAnswers(DEFAULT_MAX_UNTAKEN_ANSWER_BYTES);
