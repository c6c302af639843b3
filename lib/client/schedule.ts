/**
 * @module The clients' timing helpers: an abortable sleep (lib/core/sleep.ts) and a set of repeating tasks that never
 * overlap themselves and all stop at once, so that nothing keeps the process alive after `shutdown()`.
 *
 * @example
 * const tasks = new Repeaters();
 * tasks.every(5000, () => store.persistAll(queues()), onError);
 * await tasks.stop(); // no timer left, the running task finished
 */

export { sleep } from "../core/sleep.js";

/** Repeating tasks: each runs `ms` after its previous run ended. */
export class Repeaters {
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #running = new Set<Promise<void>>();
  readonly #unref: boolean;
  #stopped = false;

  /** `unref`: the timers do not keep the process alive (a producer's background work; consumers keep it). */
  constructor(options: { unref?: boolean } = {}) {
    this.#unref = options.unref ?? false;
  }

  /** Runs `task` every `ms` (first run after `ms`); a failure goes to `onError` and the task keeps running. */
  every(ms: number, task: () => Promise<unknown> | unknown, onError: (err: unknown) => void): void {
    const schedule = () => {
      if (this.#stopped) return;
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        const run = (async () => {
          try {
            await task();
          } catch (err) {
            onError(err);
          }
        })();
        this.#running.add(run);
        void run.finally(() => {
          this.#running.delete(run);
          schedule();
        });
      }, ms);
      if (this.#unref) timer.unref();
      this.#timers.add(timer);
    };
    schedule();
  }

  /** Clears every timer and waits for the runs in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    await Promise.all([...this.#running]);
  }
}
