/**
 * @module The send-time wake of subscription delivery on AWS (docs/subscriptions.md): an append to a topic that
 * has a subscription invokes the `Dispatch` function for that topic, at most once per topic per window across
 * every container of the stage. The container's view of which topics have subscriptions is one list query,
 * cached for `cacheMs`; the window is a conditional put of the topic's marker (`SubscriptionStore.claimWake`),
 * and only the container whose put succeeded invokes. A wake never fails or holds up the append that caused
 * it: its errors are counted and told to `onError`, and the handler waits for wakes at most `settle(ms)` long.
 */
import { BoundedMap } from "../../core/bounded-map.js";
import { MAX_SUBSCRIPTIONS } from "../../protocol/index.js";
import type { SubscriptionStore } from "./subscription-store.js";

/** How long a container trusts its list of subscribed topics (a new subscription is woken on save too). */
export const WAKE_CACHE_MS = 5_000;
/** One Dispatch invoke per topic per window: a run delivers until its receives are empty, so one is enough. */
export const WAKE_WINDOW_MS = 1_000;
/** Topics whose window this container remembers (beyond it, the marker's condition still holds the limit). */
const MAX_REMEMBERED_TOPICS = 1_024;
/** Wakes in flight at once in one container; more are dropped (the window or the backstop covers them). */
const MAX_IN_FLIGHT = 64;

export interface DispatchWakeOptions {
  subscriptions: Pick<SubscriptionStore, "list" | "claimWake">;
  /**
   * Invokes Dispatch for `topic` asynchronously (Lambda's `Event` invocation: queued, not run, on return).
   * `until` is the window's end: appends in the window wake nobody, so the run looks once more after it.
   */
  invoke: (wake: { topic: string; until: number }) => Promise<void>;
  now?: () => number;
  cacheMs?: number;
  windowMs?: number;
  onError?: (err: unknown) => void;
}

export interface DispatchWakeStats {
  /** Appends to a subscribed topic outside this container's window: a claim was tried. */
  claims: number;
  /** Claims won (the marker was written): Dispatch was invoked. */
  invoked: number;
  /** Claims lost to another container's live window. */
  lost: number;
  /** Lookups, claims or invokes that failed. */
  errors: number;
  /** Wakes not tried because MAX_IN_FLIGHT were already on their way. */
  dropped: number;
}

export class DispatchWake {
  readonly #options: DispatchWakeOptions;
  readonly #now: () => number;
  #topics: { set: ReadonlySet<string>; at: number } | undefined;
  #refreshing: Promise<ReadonlySet<string>> | undefined;
  /** This container's windows: topic → until when it does not try again (bounded by MAX_REMEMBERED_TOPICS). */
  readonly #windows = new BoundedMap<string, number>(MAX_REMEMBERED_TOPICS);
  readonly #inFlight = new Set<Promise<void>>();
  readonly stats: DispatchWakeStats = { claims: 0, invoked: 0, lost: 0, errors: 0, dropped: 0 };

  constructor(options: DispatchWakeOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** The append hint (a `QueueLog` listener): never throws or waits. */
  topicAppended(topic: string): void {
    const now = this.#now();
    if ((this.#windows.get(topic) ?? 0) > now) return;
    if (this.#inFlight.size >= MAX_IN_FLIGHT) {
      this.stats.dropped++;
      return;
    }
    const run = this.#wake(topic, now).catch((err: unknown) => {
      this.stats.errors++;
      this.#options.onError?.(err);
    });
    this.#inFlight.add(run);
    void run.finally(() => this.#inFlight.delete(run));
  }

  /** Waits for the wakes in flight, at most `ms` (a frozen Lambda sends nothing: called before the answer). */
  async settle(ms: number): Promise<void> {
    if (this.#inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    await Promise.race([Promise.allSettled([...this.#inFlight]), bound]);
    clearTimeout(timer);
  }

  async #wake(topic: string, now: number): Promise<void> {
    if (!(await this.#subscribedTopics(now)).has(topic)) return;
    const windowMs = this.#options.windowMs ?? WAKE_WINDOW_MS;
    if ((this.#windows.get(topic) ?? 0) > now) return;
    this.#remember(topic, now + windowMs, now);
    this.stats.claims++;
    const until = await this.#options.subscriptions.claimWake(topic, windowMs);
    if (until === undefined) {
      this.stats.lost++;
      return;
    }
    await this.#options.invoke({ topic, until });
    this.stats.invoked++;
  }

  async #subscribedTopics(now: number): Promise<ReadonlySet<string>> {
    const cached = this.#topics;
    if (cached !== undefined && now - cached.at < (this.#options.cacheMs ?? WAKE_CACHE_MS)) return cached.set;
    this.#refreshing ??= this.#options.subscriptions
      .list()
      .then((all) => {
        const set = new Set(all.slice(0, MAX_SUBSCRIPTIONS).map((s) => s.topic));
        this.#topics = { set, at: now };
        return set;
      })
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }

  #remember(topic: string, until: number, now: number): void {
    this.#windows.delete(topic);
    // Full: forget the windows that ended first; still full, the set forgets the oldest.
    if (this.#windows.size >= MAX_REMEMBERED_TOPICS) {
      for (const [t, u] of this.#windows) if (u <= now) this.#windows.delete(t);
    }
    this.#windows.set(topic, until);
  }
}
