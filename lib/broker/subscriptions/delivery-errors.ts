/**
 * @module Why a subscription's deliveries fail, said where a user looks: a log line of the dispatching process, the
 * subscription's last delivery error (its reason and time, in `GET /subscriptions/{group}`, `subscriptionList` and
 * the console), and a dead-lettered message's `DELIVERY_ERROR` property. Per subscription and process at most one
 * log line and one status write per `DELIVERY_ERROR_INTERVAL_MS` (the next line counts the failures in between), so
 * a target failing at full rate costs one DynamoDB put per 10 s, not one per batch.
 */
import { BoundedMap } from "../../core/bounded-map.js";
import type { Subscription } from "./subscription-store.js";

/** At most one log line and one status write per subscription and process in this long. */
export const DELIVERY_ERROR_INTERVAL_MS = 10_000;
/** A stored or logged reason is cut to this many characters. */
export const MAX_DELIVERY_ERROR_LENGTH = 512;
/** The property a dead-lettered subscription message carries: why its last delivery failed. */
export const DELIVERY_ERROR_PROPERTY = "DELIVERY_ERROR";
/** The most subscriptions whose last report time a process remembers (the oldest forgotten first). */
const MAX_REMEMBERED = 1024;

/** Where the last delivery error of a subscription is kept (SubscriptionStore). */
export interface DeliveryErrorStore {
  recordDeliveryError(group: string, reason: string, at: number): Promise<void>;
}

/**
 * A reason fit for a log line, a stored status and a message property: control characters (a target's answer may
 * hold newlines) as spaces, at most `MAX_DELIVERY_ERROR_LENGTH` characters.
 */
export function deliveryErrorText(reason: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  const clean = reason.replace(/[\u0000-\u001f\u007f]+/g, " ").trim() || "(no reason given)";
  return clean.length > MAX_DELIVERY_ERROR_LENGTH ? `${clean.slice(0, MAX_DELIVERY_ERROR_LENGTH - 1)}…` : clean;
}

/** What a subscription's target is, for a log line. */
const targetName = (s: Subscription): string => (s.target.type === "http" ? s.target.url : s.target.functionArn);

export class DeliveryErrors {
  readonly #last = new BoundedMap<string, { at: number; unreported: number }>(MAX_REMEMBERED, { order: "written" });
  readonly #writes = new Set<Promise<void>>();

  constructor(
    private readonly store: DeliveryErrorStore | undefined,
    private readonly now: () => number,
    private readonly log: (line: string) => void = (line) => console.warn(line),
  ) {}

  /** A delivery of `messages` messages of `s` failed (the whole batch, or some of it) for `reason`. */
  failed(s: Subscription, reason: string, messages: number): void {
    const now = this.now();
    const last = this.#last.get(s.group);
    if (last !== undefined && now - last.at < DELIVERY_ERROR_INTERVAL_MS) {
      last.unreported++;
      return;
    }
    const text = deliveryErrorText(reason);
    const more = last?.unreported ? ` (and ${last.unreported} more failed deliveries since the last line)` : "";
    this.log(
      `nimbus: subscription ${s.group} (topic ${s.topic}) could not deliver ${messages} message(s) to ${targetName(s)}: ${text}${more}`,
    );
    this.#last.set(s.group, { at: now, unreported: 0 });
    if (this.store === undefined) return;
    const write = this.store.recordDeliveryError(s.group, text, now).catch((err: unknown) => {
      this.log(`nimbus: the last delivery error of ${s.group} was not stored: ${String(err).slice(0, 200)}`);
    });
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
  }

  /** The status writes started and not yet done (a Lambda run waits for them before it answers). */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.#writes]);
  }
}
