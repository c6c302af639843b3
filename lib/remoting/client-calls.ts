/**
 * @module Requests from the door to a client that wait for its answer (RocketMQ's broker-to-client calls with a
 * response, such as GET_CONSUMER_RUNNING_INFO): each gets an opaque id of the connection, and the client's answer
 * (a response frame with that opaque) settles it. Bounded: calls waiting per connection (past it a call fails at
 * once) and each call's wait; a closed connection fails every waiting call.
 */
import type { RemotingCommand } from "./frame.js";

/** Calls waiting for their answer on one connection, at most. */
export const MAX_WAITING_CALLS = 64;
/** The longest a call waits by default: 9 s (RocketMQ's admin waits 3 × 3 s for a relayed answer). */
export const DEFAULT_CALL_TIMEOUT_MS = 9000;

export class ClientCallError extends Error {
  override readonly name = "ClientCallError";
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

interface Waiting {
  resolve: (answer: RemotingCommand) => void;
  reject: (err: ClientCallError) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class ClientCalls {
  readonly #waiting = new Map<number, Waiting>();
  #closed = false;

  /** Registers a call of `opaque`; the promise settles with the client's answer, a timeout, or the close. */
  expect(opaque: number, timeoutMs: number): Promise<RemotingCommand> {
    if (this.#closed) return Promise.reject(new ClientCallError("the client's connection is closed", false));
    if (this.#waiting.size >= MAX_WAITING_CALLS)
      return Promise.reject(new ClientCallError(`over ${MAX_WAITING_CALLS} calls wait for this client`, false));
    return new Promise<RemotingCommand>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(opaque);
        reject(new ClientCallError(`the client did not answer within ${timeoutMs} ms`, true));
      }, timeoutMs);
      this.#waiting.set(opaque, { resolve, reject, timer });
    });
  }

  /** A call could not be sent: it fails now. */
  abandon(opaque: number, why: string): void {
    const w = this.#waiting.get(opaque);
    if (w === undefined) return;
    this.#waiting.delete(opaque);
    clearTimeout(w.timer);
    w.reject(new ClientCallError(why, false));
  }

  /** A response frame from the client: settles its call; a stray one (late, unknown) is dropped. */
  answered(frame: RemotingCommand): void {
    const w = this.#waiting.get(frame.opaque);
    if (w === undefined) return;
    this.#waiting.delete(frame.opaque);
    clearTimeout(w.timer);
    w.resolve(frame);
  }

  close(): void {
    this.#closed = true;
    for (const [opaque, w] of this.#waiting) {
      clearTimeout(w.timer);
      w.reject(new ClientCallError("the client's connection closed", false));
      this.#waiting.delete(opaque);
    }
  }
}
