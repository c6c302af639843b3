/**
 * @module Subscriptions at rest: one item per consumer group in the routes table (`subscriptions` / group), the
 * definition as JSON. An http target's signing secret is sealed (AES-256-GCM under the stage's seal key, the
 * group bound in: lib/broker/security/secret-sealer.ts) in its own attribute, never in the definition; the API
 * never answers it. A secret stored in clear before sealing existed is still read (and sealed at the next save).
 * The list is one partition query, bounded by MAX_SUBSCRIPTIONS.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { compileFilter } from "../../core/filter/index.js";
import { type TargetNetworks, urlHostProblem } from "../../core/target-address.js";
import {
  MAX_SUBSCRIPTIONS,
  type SubscriptionDefinition,
  SubscriptionDefinitionSchema,
  type SubscriptionInfo,
} from "../../protocol/index.js";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import type { SecretSealer } from "../security/index.js";
import { queryAll } from "../store/index.js";

const SUBSCRIPTIONS = "subscriptions";
/** The partition of each subscription's last delivery error (`subscription-errors` / group: `reason`, `at`). */
const DELIVERY_ERRORS = "subscription-errors";
/** What the stored definition holds in place of a sealed secret (a valid secret's shape, never a secret). */
const SEALED_PLACEHOLDER = "(sealed:in-the-sealedSecret-attribute)";
/** The associated data a subscription's secret is sealed with: a sealed secret copied to another group does not open. */
const sealContext = (group: string) => `subscription:${group}`;
/** The partition of a topic's wake marker in the routes table (`wake#<topic>` / `-`, attribute `until`). */
export const WAKE_MARKER_PREFIX = "wake#";

/** A stored subscription: its definition (secret included) and its times. */
export interface Subscription extends SubscriptionDefinition {
  group: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * Checks a filter expression beyond its shape, throwing PARAMETER_ILLEGAL with a bounded message: RocketMQ's tag
 * rules or SQL92 (lib/core/filter's `compileFilter`). Injectable for tests of refusals.
 */
export type FilterCheck = (filter: SubscriptionDefinition["filterExpression"]) => void;

export const checkFilterExpression: FilterCheck = (filter) => {
  compileFilter(filter);
};

export class SubscriptionStore {
  constructor(
    private readonly routes: Table,
    private readonly checkFilter: FilterCheck,
    private readonly now: () => number,
    /** Before a valid definition is written: fixes when the group starts on the topic (POP's `start`). */
    private readonly beforeSave: (group: string, topic: string) => Promise<void> = async () => {},
    /**
     * Seals http targets' signing secrets (the stage's seal key). Without one an http target cannot be saved, and
     * a sealed secret reads as "" (a process that delivers nothing: the gRPC proxy, the name server; a delivery
     * refuses "").
     */
    private readonly sealer?: SecretSealer,
    /** What addresses an http target may name (docs/security.md "Subscription targets"). */
    readonly targetNetworks: TargetNetworks = "public",
  ) {}

  /**
   * Creates or replaces `group`'s subscription. Everything is checked before the write (a 400 stores nothing).
   * `exists` says which it was (the route asks for Create or Update permission by it).
   */
  async put(
    group: string,
    definition: SubscriptionDefinition,
  ): Promise<{ subscription: Subscription; created: boolean }> {
    const parsed = SubscriptionDefinitionSchema.safeParse(definition);
    if (!parsed.success)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, parsed.error.issues[0]?.message ?? "bad subscription");
    this.checkFilter(parsed.data.filterExpression);
    const current = await this.get(group);
    const now = this.now();
    if (!current && (await this.list()).length >= MAX_SUBSCRIPTIONS)
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `a stage holds at most ${MAX_SUBSCRIPTIONS} subscriptions`);
    if (parsed.data.target.type === "http") {
      const problem = urlHostProblem(parsed.data.target.url, this.targetNetworks);
      if (problem !== undefined)
        throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `the target is refused: ${problem}`);
    }
    if (parsed.data.target.type === "http" && this.sealer === undefined)
      throw new NimbusError(
        ErrorCode.SYSTEM_ERROR,
        "this process has no seal key for webhook secrets (NIMBUS_SEAL_KEY)",
      );
    await this.beforeSave(group, parsed.data.topic);
    const subscription: Subscription = {
      ...parsed.data,
      group,
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
    };
    const item: Item = {
      pk: SUBSCRIPTIONS,
      sk: group,
      ...this.#sealed(group, parsed.data),
      createdAt: subscription.createdAt,
      updatedAt: now,
    };
    if (current) {
      // A replace: last writer wins, as updateTopic's; a delete racing it may be undone (the admin's later PUT).
      await this.routes.put(item);
      this.onSaved?.(subscription);
      return { subscription, created: false };
    }
    try {
      // Condition `attribute_not_exists(pk)`: a create never overwrites a subscription another admin created
      // meanwhile (its createdAt, its Create permission check); the loser is told to retry as an update.
      await this.routes.put(item, { condition: { exists: false } });
    } catch (err) {
      if (err instanceof ConditionFailedError)
        throw new NimbusError(ErrorCode.CONDITION_FAILED, `the subscription of ${group} was created meanwhile; retry`);
      throw err;
    }
    this.onSaved?.(subscription);
    return { subscription, created: true };
  }

  /** Told after a subscription is created or replaced (an in-process dispatcher wakes it: its first receive). */
  onSaved: ((subscription: Subscription) => void) | undefined;

  /** The group's subscription, or undefined: one consistent read. */
  async get(group: string): Promise<Subscription | undefined> {
    const item = await this.routes.get({ pk: SUBSCRIPTIONS, sk: group }, { consistent: true });
    return item ? this.#subscriptionOf(item) : undefined;
  }

  /** Whether the group has one (before the route asks for Create or Update). */
  async exists(group: string): Promise<boolean> {
    return (await this.get(group)) !== undefined;
  }

  async delete(group: string): Promise<void> {
    if (!(await this.get(group)))
      throw new NimbusError(ErrorCode.SUBSCRIPTION_GROUP_NOT_EXIST, `the group ${group} has no subscription`);
    await this.routes.delete({ pk: SUBSCRIPTIONS, sk: group });
    await this.routes.delete({ pk: DELIVERY_ERRORS, sk: group });
  }

  /**
   * Keeps `reason` as the group's last delivery error (delivery-errors.ts, at most one write per 10 s per
   * dispatching process). Unconditional: the latest failure replaces the one before, whichever process saw it.
   */
  async recordDeliveryError(group: string, reason: string, at: number): Promise<void> {
    await this.routes.put({ pk: DELIVERY_ERRORS, sk: group, reason, at });
  }

  /** The group's last delivery error, if a delivery ever failed: one read (only the API asks). */
  async lastDeliveryError(group: string): Promise<LastDeliveryError | undefined> {
    const item = await this.routes.get({ pk: DELIVERY_ERRORS, sk: group });
    return item === undefined ? undefined : lastErrorOf(item);
  }

  /** Every group's last delivery error: one partition query, bounded as the subscriptions are. */
  async lastDeliveryErrors(): Promise<Map<string, LastDeliveryError>> {
    const items = await queryAll(this.routes, DELIVERY_ERRORS, { limit: MAX_SUBSCRIPTIONS });
    return new Map(items.map((i) => [String(i.sk), lastErrorOf(i)]));
  }

  /**
   * Claims the right to wake Dispatch for `topic` until `now + windowMs`, across every process of the stage:
   * one conditional put of the marker `wake#<topic>`. The window's end if this caller won the claim, else undefined.
   */
  async claimWake(topic: string, windowMs: number): Promise<number | undefined> {
    const now = this.now();
    const until = now + windowMs;
    try {
      // Condition `absentOrUntilBefore: now`: the marker is absent or its window has passed, so while one
      // window runs no other put succeeds (at most one wake per topic per window across all containers), and of
      // concurrent claims after it, exactly one wins.
      await this.routes.put(
        { pk: `${WAKE_MARKER_PREFIX}${topic}`, sk: "-", until },
        { condition: { absentOrUntilBefore: now } },
      );
      return until;
    } catch (err) {
      if (err instanceof ConditionFailedError) return undefined;
      throw err;
    }
  }

  /** Every subscription, or those of one topic: one partition query. */
  async list(topic?: string): Promise<Subscription[]> {
    const all = (await queryAll(this.routes, SUBSCRIPTIONS, { limit: MAX_SUBSCRIPTIONS })).map((i) =>
      this.#subscriptionOf(i),
    );
    return topic === undefined ? all : all.filter((s) => s.topic === topic);
  }

  /** The stored form of a definition: the http target's secret sealed beside it, a placeholder in its place. */
  #sealed(group: string, definition: SubscriptionDefinition): { definition: string; sealedSecret?: string } {
    if (definition.target.type !== "http" || this.sealer === undefined)
      return { definition: JSON.stringify(definition) };
    const sealedSecret = this.sealer.seal(sealContext(group), definition.target.secret);
    const target = { ...definition.target, secret: SEALED_PLACEHOLDER };
    return { definition: JSON.stringify({ ...definition, target }), sealedSecret };
  }

  /**
   * A sealed secret, opened; "" when this process has no seal key or not the one it was sealed with (a key
   * changed, an item copied to another group). Only a delivery needs the secret, and it refuses "" (HttpTarget):
   * the subscription still reads, answers, saves again (sealing the secret given then) and deletes.
   */
  #opened(group: string, sealed: string): string {
    if (this.sealer === undefined) return "";
    try {
      return this.sealer.open(sealContext(group), sealed);
    } catch (err) {
      if (err instanceof NimbusError && err.code === ErrorCode.DATA_CORRUPTED) return "";
      throw err;
    }
  }

  #subscriptionOf(item: Item): Subscription {
    const group = String(item.sk);
    const parsed = SubscriptionDefinitionSchema.safeParse(JSON.parse(String(item.definition)));
    if (!parsed.success)
      throw new NimbusError(ErrorCode.DATA_CORRUPTED, `the subscription of ${group} is not a subscription`);
    const definition = parsed.data;
    if (definition.target.type === "http" && typeof item.sealedSecret === "string")
      definition.target = { ...definition.target, secret: this.#opened(group, item.sealedSecret) };
    return { ...definition, group, createdAt: Number(item.createdAt ?? 0), updatedAt: Number(item.updatedAt ?? 0) };
  }
}

/** A subscription's last failed delivery: why (bounded, control characters replaced) and when (ms since epoch). */
export interface LastDeliveryError {
  reason: string;
  at: number;
}

const lastErrorOf = (item: Item): LastDeliveryError => ({
  reason: String(item.reason ?? ""),
  at: Number(item.at ?? 0),
});

/** What the API answers of a subscription: everything but an http target's secret, with its last delivery error. */
export function subscriptionInfo(s: Subscription, lastError?: LastDeliveryError): SubscriptionInfo {
  const target =
    s.target.type === "http"
      ? { type: "http" as const, url: s.target.url, secretSet: true as const }
      : { type: "lambda" as const, functionArn: s.target.functionArn };
  return {
    group: s.group,
    topic: s.topic,
    filterExpression: s.filterExpression,
    target,
    batchSize: s.batchSize,
    maxBatchingWindowMs: s.maxBatchingWindowMs,
    maxConcurrency: s.maxConcurrency,
    ordering: s.ordering,
    maxReconsumeTimes: s.maxReconsumeTimes,
    timeoutMs: s.timeoutMs,
    retryBackoff: s.retryBackoff,
    enableMsgTrace: s.enableMsgTrace,
    ...(s.customizedTraceTopic === undefined ? {} : { customizedTraceTopic: s.customizedTraceTopic }),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    ...(lastError === undefined ? {} : { lastDeliveryError: lastError }),
  };
}
