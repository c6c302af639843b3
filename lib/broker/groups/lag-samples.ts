/**
 * @module Lag samples per consumer group, kept by the broker so the console's lag chart has history when the
 * page opens. Each group has a ring of `slots` items in the offsets table (`lag:<G>` / slot): the sample taken
 * at time t goes to slot floor(t / interval) mod slots, overwriting the one a ring earlier, so a group never
 * holds more than `slots` items (a day at one a minute by default) and nothing needs deleting. A scheduled job
 * (every minute on AWS, every `intervalMs` in `nimbus dev`) samples every group: its total lag as
 * consumerProgress sums it, without the last-consumed-time reads. Cost: docs/cost.md "Lag samples".
 */
import { MAX_LAG_SAMPLES } from "../../protocol/index.js";
import type { Table } from "../../storage/table.js";
import { keys, queryAll } from "../store/index.js";

export interface LagSample {
  at: number;
  lag: number;
}

export interface LagSampleOptions {
  /** At most one sample per group per this. Default 60 s (EventBridge's shortest period). */
  intervalMs: number;
  /** Samples a group keeps. Default 1440 (a day at one a minute); at most MAX_LAG_SAMPLES. */
  slots: number;
}

export const DEFAULT_LAG_SAMPLE_OPTIONS: LagSampleOptions = { intervalMs: 60_000, slots: MAX_LAG_SAMPLES };

export class LagSamples {
  readonly options: LagSampleOptions;

  constructor(
    private readonly offsets: Table,
    options: Partial<LagSampleOptions>,
    private readonly now: () => number,
  ) {
    const merged = { ...DEFAULT_LAG_SAMPLE_OPTIONS, ...options };
    this.options = { intervalMs: merged.intervalMs, slots: Math.min(Math.max(1, merged.slots), MAX_LAG_SAMPLES) };
  }

  /** The slot of a sample taken at `at`: a ring position, so the partition never grows past `slots`. */
  slotOf(at: number): number {
    return Math.floor(at / this.options.intervalMs) % this.options.slots;
  }

  /** Stores the group's lag now, in its ring slot (one put; two samplers in one period write the same slot). */
  async record(group: string, lag: number): Promise<LagSample> {
    const at = this.now();
    // Unconditional: the slot's previous sample is a ring older (or this period's other sampler's).
    await this.offsets.put({ pk: keys.lagSamples(group), sk: String(this.slotOf(at)).padStart(4, "0"), at, lag });
    return { at, lag };
  }

  /** The group's samples of the last ring, oldest first (a slot not rewritten for a ring is stale and skipped). */
  async history(group: string): Promise<LagSample[]> {
    const since = this.now() - this.options.intervalMs * this.options.slots;
    const items = await queryAll(this.offsets, keys.lagSamples(group));
    return items
      .map((i) => ({ at: Number(i.at), lag: Number(i.lag) }))
      .filter((s) => Number.isFinite(s.at) && Number.isFinite(s.lag) && s.at >= since)
      .sort((a, b) => a.at - b.at)
      .slice(-this.options.slots);
  }
}
