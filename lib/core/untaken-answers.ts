/**
 * @module The bytes of answers a process has written that their clients have not taken yet, across every connection
 * of its gRPC and remoting doors: answers waiting for a client's HTTP/2 windows, and answers in sockets their
 * clients do not read. Each door bounds them per connection; this bounds their sum, so that many connections each
 * within their own bound cannot hold the process's memory. Past it, new requests are refused at once (before any
 * work), and an answer past it is not queued: the gRPC door resets its stream, the remoting door answers SYSTEM_BUSY
 * in place of a large one (docs/grpc.md, docs/remoting.md).
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

  constructor(readonly maxBytes: number) {}

  /** Untaken answer bytes of every connection, as each last counted its own. */
  get held(): number {
    return this.#held;
  }

  /**
   * A connection's share, zero until it counts; `onStall` is called when the connection's untaken answers stay at or
   * above their level for `stallMs` (StallWatch), unless it is absent.
   */
  share(onStall?: () => void, stallMs = DEFAULT_ANSWER_STALL_MS): AnswerShare {
    const watch = onStall === undefined ? undefined : new StallWatch(stallMs, onStall);
    return new AnswerShare(
      (delta) => {
        this.#held += delta;
      },
      this,
      watch,
    );
  }
}

/** One connection's part of the ledger: set to what it holds untaken whenever that changes, released when it ends. */
export class AnswerShare {
  #counted = 0;

  constructor(
    private readonly move: (delta: number) => void,
    private readonly ledger: UntakenAnswers,
    private readonly stall: StallWatch | undefined,
  ) {}

  /** The connection now holds `bytes` untaken; returns them. */
  set(bytes: number): number {
    if (bytes !== this.#counted) {
      this.move(bytes - this.#counted);
      this.#counted = bytes;
    }
    return bytes;
  }

  /**
   * As `set`, where the bytes wait on the client (a write has left for the socket or been taken, or DATA waits for
   * its window): the stall watch follows these counts only, so a turn's answers still gathered arm no timer.
   */
  settled(bytes: number): number {
    this.stall?.update(bytes);
    return this.set(bytes);
  }

  /** Whether the process's untaken answers are past its bound: new requests are refused until they are not. */
  full(): boolean {
    return this.ledger.held > this.ledger.maxBytes;
  }

  /** Whether `bytes` more fit under the process's bound (`roomFor`), the connection's share counted as last set. */
  fits(bytes: number): boolean {
    return this.ledger.held + bytes <= roomFor(this.ledger.maxBytes, bytes);
  }

  /** The connection is gone: its share is given back. */
  release(): void {
    this.settled(0);
  }
}

/**
 * How long a connection's untaken answers may stay at or above their level before it is closed: a client that takes
 * nothing (a window of 0, a socket it does not read) holds its share of the bound for at most this long.
 */
export const DEFAULT_ANSWER_STALL_MS = 60_000;

/**
 * Watches a connection's untaken answers as its writes leave and are taken: once they are above 0, they must fall
 * below the level they had (or to 0) within `ms`, or `onStall` is called (the connection is closed). A client taking
 * its answers, however slowly, keeps lowering the level; one that takes nothing does not. No timer while nothing waits.
 */
export class StallWatch {
  #timer: NodeJS.Timeout | undefined;
  #level = 0;

  constructor(
    private readonly ms: number,
    private readonly onStall: () => void,
  ) {}

  /** The connection holds `bytes` untaken now. */
  update(bytes: number): void {
    if (bytes === 0) {
      this.stop();
      return;
    }
    if (this.#timer !== undefined && bytes >= this.#level) return;
    // Armed, or armed again from now at the lower level (a new timer: `refresh` is not one Node's mock timers keep).
    clearTimeout(this.#timer);
    this.#level = bytes;
    this.#timer = setTimeout(this.onStall, this.ms);
    this.#timer.unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** The ledger of this process's doors, unless a server is given its own. */
export const PROCESS_UNTAKEN_ANSWERS = new UntakenAnswers(DEFAULT_MAX_UNTAKEN_ANSWER_BYTES);
