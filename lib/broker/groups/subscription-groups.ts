/**
 * @module Subscription groups, as RocketMQ's SubscriptionGroupManager (subscriptionGroup.json): one item per
 * consumer group in the routes table (`subgroups` / group), read by every function that serves consumers.
 * A group the broker meets (a consumer's first commit or heartbeat in a process, a POP receive) gets an item
 * with RocketMQ's defaults, as its autoCreateSubscriptionGroup does, so `GET /groups` lists it; updateSubGroup
 * replaces it with a config. Reads are cached per process for `cacheMs` (the route cache's period): a change is
 * honoured everywhere within it, and a pull costs no extra read in the usual case.
 */
import { BoundedMap } from "../../core/bounded-map.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import {
  DEFAULT_SUBSCRIPTION_GROUP,
  type SubscriptionGroupConfig,
  type SubscriptionGroupSettings,
} from "../../protocol/index.js";
import { ConditionFailedError, type Item, type Table } from "../../storage/table.js";
import { keys } from "../store/index.js";

export type { SubscriptionGroupConfig, SubscriptionGroupSettings };

/** Settings to set; one left out (or undefined) takes RocketMQ's default. */
export type SubscriptionGroupUpdate = {
  [K in keyof SubscriptionGroupSettings]?: SubscriptionGroupSettings[K] | undefined;
};

/** Groups whose config a process caches, and groups it remembers having met: at most this many each. */
const MAX_CACHED_GROUPS = 10_000;

export class SubscriptionGroups {
  readonly #cache = new BoundedMap<string, { config: SubscriptionGroupConfig; readAt: number }>(MAX_CACHED_GROUPS);
  readonly #met = new Set<string>();

  constructor(
    private readonly routes: Table,
    private readonly cacheMs: number,
    private readonly now: () => number,
  ) {}

  /** The group's config: its item, or RocketMQ's defaults (unconfigured) when it has none. Cached. */
  async configOf(group: string): Promise<SubscriptionGroupConfig> {
    const cached = this.#cache.get(group);
    const now = this.now();
    if (cached && now - cached.readAt < this.cacheMs) return cached.config;
    const item = await this.routes.get({ pk: keys.subscriptionGroups, sk: group });
    const config = item ? toConfig(item) : unconfigured(group, 0);
    this.#remember(group, config, now);
    return config;
  }

  /** RocketMQ's pull and POP check: NO_PERMISSION when the group's consumeEnable is false. */
  async checkConsumeEnabled(group: string): Promise<void> {
    if (!(await this.configOf(group)).consumeEnable) {
      throw new NimbusError(ErrorCode.NO_PERMISSION, `subscription group no permission, ${group}`);
    }
  }

  /** A BROADCASTING consumer of a group whose consumeBroadcastEnable is false: NO_PERMISSION. */
  async checkMessageModel(group: string, messageModel: string | undefined): Promise<void> {
    if (messageModel !== "BROADCASTING") return;
    if (!(await this.configOf(group)).consumeBroadcastEnable) {
      throw new NimbusError(
        ErrorCode.NO_PERMISSION,
        `the consumer group[${group}] can not consume by broadcast way (consumeBroadcastEnable is false)`,
      );
    }
  }

  /**
   * Records that the group exists (its defaults), once per process: a conditional create, so it never
   * overwrites a config updateSubGroup wrote.
   */
  async meet(group: string): Promise<void> {
    if (this.#met.has(group)) return;
    const since = this.now();
    try {
      // attribute_not_exists: creates the defaults item only; a configured group keeps its config.
      await this.routes.put(
        { pk: keys.subscriptionGroups, sk: group, configured: false, updatedAt: since },
        { condition: { exists: false } },
      );
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
    }
    if (this.#met.size >= MAX_CACHED_GROUPS) this.#met.clear();
    this.#met.add(group);
  }

  /** mqadmin's updateSubGroup: replaces the group's config; a setting left out takes RocketMQ's default. */
  async update(group: string, settings: SubscriptionGroupUpdate): Promise<SubscriptionGroupConfig> {
    const config: SubscriptionGroupConfig = {
      ...DEFAULT_SUBSCRIPTION_GROUP,
      ...definedOnly(settings),
      groupName: group,
      configured: true,
      updatedAt: this.now(),
    };
    // Unconditional: the last update wins, as RocketMQ's createAndUpdateSubscriptionGroupConfig.
    await this.routes.put({ pk: keys.subscriptionGroups, sk: group, ...toAttributes(config) });
    this.#remember(group, config, this.now());
    this.#met.add(group);
    return config;
  }

  /** mqadmin's deleteSubGroup: SUBSCRIPTION_GROUP_NOT_EXIST when the broker has no item for the group. */
  async delete(group: string): Promise<void> {
    const item = await this.routes.get({ pk: keys.subscriptionGroups, sk: group }, { consistent: true });
    if (!item) {
      throw new NimbusError(ErrorCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group [${group}] does not exist`);
    }
    await this.routes.delete({ pk: keys.subscriptionGroups, sk: group });
    this.#cache.delete(group);
    this.#met.delete(group);
  }

  /** One page of every group the broker knows, in name order. */
  async list(page: { startAfter?: string | undefined; limit: number }): Promise<{
    configs: SubscriptionGroupConfig[];
    nextStartAfter?: string;
  }> {
    const found = await this.routes.query(keys.subscriptionGroups, {
      limit: page.limit,
      startAfter: page.startAfter,
      consistent: true,
    });
    const configs = found.items.map(toConfig);
    const last = configs.at(-1)?.groupName;
    return found.lastSk === undefined || last === undefined ? { configs } : { configs, nextStartAfter: last };
  }

  #remember(group: string, config: SubscriptionGroupConfig, readAt: number): void {
    this.#cache.set(group, { config, readAt });
  }
}

function unconfigured(group: string, updatedAt: number): SubscriptionGroupConfig {
  return { ...DEFAULT_SUBSCRIPTION_GROUP, groupName: group, configured: false, updatedAt };
}

function toConfig(item: Item): SubscriptionGroupConfig {
  const group = String(item.sk);
  const updatedAt = Number(item.updatedAt ?? 0);
  if (item.configured !== true) return unconfigured(group, updatedAt);
  const d = DEFAULT_SUBSCRIPTION_GROUP;
  const flag = (v: unknown, fallback: boolean) => (typeof v === "boolean" ? v : fallback);
  return {
    groupName: group,
    consumeEnable: flag(item.consumeEnable, d.consumeEnable),
    consumeBroadcastEnable: flag(item.consumeBroadcastEnable, d.consumeBroadcastEnable),
    retryMaxTimes: typeof item.retryMaxTimes === "number" ? item.retryMaxTimes : d.retryMaxTimes,
    consumeMessageOrderly: flag(item.consumeMessageOrderly, d.consumeMessageOrderly),
    configured: true,
    updatedAt,
  };
}

function toAttributes(c: SubscriptionGroupConfig) {
  return {
    configured: true,
    consumeEnable: c.consumeEnable,
    consumeBroadcastEnable: c.consumeBroadcastEnable,
    retryMaxTimes: c.retryMaxTimes,
    consumeMessageOrderly: c.consumeMessageOrderly,
    updatedAt: c.updatedAt,
  };
}

function definedOnly(s: SubscriptionGroupUpdate): Partial<SubscriptionGroupSettings> {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));
}
