/**
 * @module Delivery inside one long-running process (`nimbus dev`): the write path's append hint wakes the
 * subscriptions of the appended topic, a retry falling due wakes its subscription by a timer, and a backstop
 * (once a minute by default) wakes every subscription, for what no hint announced (a message whose invisible
 * time ended because a process died, an append by another process). Nothing runs while no hint comes.
 */
import { isSystemTopic } from "../../core/names.js";
import type { TraceCounts } from "./delivery-trace.js";
import type { DispatchReport, SubscriptionDispatcher } from "./dispatcher.js";
import type { Subscription, SubscriptionStore } from "./subscription-store.js";

/** A retry's wake comes this long after its message is visible again (clocks read in different places). */
const RETRY_WAKE_MARGIN_MS = 50;
const MAX_KEPT_ERRORS = 20;
/**
 * An append hint reuses the list of subscriptions read at most this long ago (one read of the list, not one per
 * append: at 2,000 single sends a second the read was about 4 % of the broker's CPU). A subscription saved in
 * this process clears it at once; one saved by another process is seen within this time (and by the backstop).
 */
export const SUBSCRIPTION_LIST_REUSE_MS = 1000;

export interface InProcessDispatchOptions {
  store: SubscriptionStore;
  dispatcher: SubscriptionDispatcher;
  /** How long after its invisible time POP redelivers a message (`PopService.redeliveryGraceMs`); default 0. */
  redeliveryGraceMs?: number;
  /** Period of the backstop that wakes every subscription; default 60 s. */
  backstopMs?: number;
  onError?: (err: unknown) => void;
  /** The clock (ms) of retry wakes and of the list's reuse window; default `Date.now`. */
  now?: () => number;
}

export class InProcessDispatch {
  readonly #options: InProcessDispatchOptions;
  readonly #now: () => number;
  /** Topics whose wake is already on its way (one subscription list per burst of appends). */
  readonly #topicsWaking = new Set<string>();
  /** One wake timer per subscription at most: the earliest due time asked for (bounded by the subscriptions). */
  readonly #retryTimers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #running = new Set<Promise<unknown>>();
  readonly #backstop: NodeJS.Timeout;
  #closed = false;
  readonly #errors: string[] = [];
  /** The subscriptions as last read for an append hint, and when (`now`); undefined: read again. */
  #listed: { at: number; all: Promise<Subscription[]> } | undefined;

  constructor(options: InProcessDispatchOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#backstop = setInterval(() => void this.wakeAll(), options.backstopMs ?? 60_000);
    this.#backstop.unref();
  }

  /** The append hint (a `QueueLog` listener): wakes the topic's subscriptions; never throws or waits. */
  topicAppended(topic: string): void {
    // A system topic (the trace topic's records, retries, dead letters) is never subscribed: no list to read.
    if (this.#closed || this.#topicsWaking.has(topic) || isSystemTopic(topic)) return;
    this.#topicsWaking.add(topic);
    this.#track(
      this.#subscriptions()
        .finally(() => this.#topicsWaking.delete(topic))
        .then((all) => Promise.all(all.filter((s) => s.topic === topic).map((s) => this.wake(s)))),
    );
  }

  /** A retry falls due at `at`: its subscription is woken then (the dispatcher's `onRetryDue`). */
  retryDue(subscription: Subscription, at: number): void {
    if (this.#closed) return;
    const key = subscription.group;
    const pending = this.#retryTimers.get(key);
    if (pending !== undefined && pending.at <= at) return;
    if (pending !== undefined) clearTimeout(pending.timer);
    const timer = setTimeout(
      () => {
        this.#retryTimers.delete(key);
        this.#track(this.wake(subscription));
      },
      Math.max(0, at - this.#now()) + (this.#options.redeliveryGraceMs ?? 0) + RETRY_WAKE_MARGIN_MS,
    );
    this.#retryTimers.set(key, { at, timer });
  }

  /** A subscription was created or replaced (`SubscriptionStore.onSaved`): its first receive; never throws. */
  saved(subscription: Subscription): void {
    this.#listed = undefined;
    this.#track(this.wake(subscription));
  }

  /** Wakes one subscription (its current definition, or nothing if it was deleted meanwhile). */
  async wake(subscription: Subscription): Promise<DispatchReport | undefined> {
    if (this.#closed) return undefined;
    const current = await this.#options.store.get(subscription.group);
    return current ? this.#options.dispatcher.wake(current) : undefined;
  }

  /** Wakes every subscription (the backstop; also after a subscription is created or replaced). */
  async wakeAll(): Promise<void> {
    if (this.#closed) return;
    const run = this.#options.store.list().then((all) => Promise.all(all.map((s) => this.#options.dispatcher.wake(s))));
    await this.#track(run);
  }

  /** What was delivered and settled since start (the dispatcher's totals). */
  get totals(): Readonly<DispatchReport> {
    return this.#options.dispatcher.totals;
  }

  /** Traced subscriptions' trace records: stored, dropped, failed (the dispatcher's counts). */
  get traceCounts(): Readonly<TraceCounts> {
    return this.#options.dispatcher.traceCounts;
  }

  /** The last failed wakes' messages (at most MAX_KEPT_ERRORS), oldest first. */
  get errors(): readonly string[] {
    return [...this.#errors];
  }

  /** Resolves once no wake is running (those started meanwhile included): nothing of it writes after. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#backstop);
    for (const { timer } of this.#retryTimers.values()) clearTimeout(timer);
    this.#retryTimers.clear();
    await this.#options.dispatcher.close();
    await Promise.allSettled([...this.#running]);
  }

  /** Every subscription, read again once the last read is SUBSCRIPTION_LIST_REUSE_MS old (or failed). */
  #subscriptions(): Promise<Subscription[]> {
    const now = this.#now();
    const last = this.#listed;
    // A clock that went back (`Date.now` stepped) reads again, as one past the window does.
    if (last !== undefined && now >= last.at && now - last.at < SUBSCRIPTION_LIST_REUSE_MS) return last.all;
    const listed = { at: now, all: this.#options.store.list() };
    this.#listed = listed;
    listed.all.catch(() => {
      if (this.#listed === listed) this.#listed = undefined;
    });
    return listed.all;
  }

  #track(run: Promise<unknown>): Promise<void> {
    const tracked = run.then(
      () => undefined,
      (err: unknown) => {
        this.#errors.push((err instanceof Error ? err.message : String(err)).slice(0, 500));
        if (this.#errors.length > MAX_KEPT_ERRORS) this.#errors.shift();
        this.#options.onError?.(err);
      },
    );
    this.#running.add(tracked);
    void tracked.finally(() => this.#running.delete(tracked));
    return tracked;
  }
}
