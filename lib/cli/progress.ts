/**
 * @module Progress of long work (`send --count`, `consume --quiet`): on a terminal a bar redrawn in place
 * with the count, the rate and the time left; elsewhere (a pipe, a CI log) one plain line per interval.
 *
 * @example
 * const progress = new Progress({ verb: "sent", total: 100_000, stream: process.stderr });
 * progress.add(32); // per batch
 * progress.finish(); // clears the bar
 */
import { formatRate } from "./output.js";

/** What the progress is written to: `process.stderr`, or a fake in tests. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** "sent", "consumed". */
  verb: string;
  /** The count to reach; without it the line shows the count and the rate only. */
  total?: number | undefined;
  stream: ProgressStream;
  /** Redraws of the bar at most this often. Default 100 ms. */
  redrawMs?: number;
  /** Plain lines (not a terminal) at most this often. Default 1000 ms. */
  lineMs?: number;
  /** A clock, for tests. Default `Date.now`. */
  now?: () => number;
}

export class Progress {
  readonly #options: Required<Omit<ProgressOptions, "total">> & { total?: number | undefined };
  readonly #tty: boolean;
  readonly #started: number;
  #count = 0;
  /** The first draw waits one interval: short work shows no progress at all. */
  #lastDraw: number;
  #drawn = false;

  constructor(options: ProgressOptions) {
    this.#options = { redrawMs: 100, lineMs: 1000, now: Date.now, ...options };
    this.#tty = options.stream.isTTY === true;
    this.#started = this.#options.now();
    this.#lastDraw = this.#started;
  }

  get count(): number {
    return this.#count;
  }

  /** Seconds since the start. */
  get elapsed(): number {
    return Math.max(0, this.#options.now() - this.#started) / 1000;
  }

  /** Messages per second since the start. */
  get rate(): number {
    const s = this.elapsed;
    return s > 0 ? this.#count / s : 0;
  }

  add(n: number): void {
    this.#count += n;
    const now = this.#options.now();
    const every = this.#tty ? this.#options.redrawMs : this.#options.lineMs;
    if (now - this.#lastDraw < every) return;
    this.#lastDraw = now;
    this.#draw();
  }

  /** Removes the bar (a terminal) so that the final line takes its place. */
  finish(): void {
    if (this.#tty && this.#drawn) this.#options.stream.write("\r\x1b[2K");
    this.#drawn = false;
  }

  #draw(): void {
    const { stream, total, verb } = this.#options;
    const rate = `${formatRate(this.rate)} msg/s`;
    if (!this.#tty) {
      const of = total === undefined ? "" : `/${total} (${percent(this.#count, total)})`;
      stream.write(`${verb} ${this.#count}${of}, ${rate}\n`);
      return;
    }
    this.#drawn = true;
    if (total === undefined) {
      stream.write(`\r\x1b[2K${verb} ${this.#count}  ${rate}`);
      return;
    }
    const left = this.rate > 0 ? Math.ceil((total - this.#count) / this.rate) : Number.NaN;
    const tail = ` ${percent(this.#count, total).padStart(4)}  ${this.#count}/${total}  ${rate}  ETA ${eta(left)}`;
    const width = Math.max(10, Math.min(40, (stream.columns || 80) - tail.length - 3));
    const filled = Math.min(width, Math.floor((this.#count / Math.max(1, total)) * width));
    stream.write(`\r\x1b[2K[${"#".repeat(filled)}${"-".repeat(width - filled)}]${tail}`);
  }
}

function percent(count: number, total: number): string {
  return `${Math.floor((100 * count) / Math.max(1, total))}%`;
}

function eta(seconds: number): string {
  if (!Number.isFinite(seconds)) return "-";
  return seconds >= 60 ? `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s` : `${seconds}s`;
}
