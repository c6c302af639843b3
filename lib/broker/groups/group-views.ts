/**
 * @module The operator's views of consumer groups (RocketMQ Dashboard's consumer page, mqadmin's
 * consumerProgress without -g): every group the broker knows with its topics, live members and total lag,
 * a page at a time; the groups that consume a topic (mqadmin's queryTopicConsumeByWho); and the scheduled lag
 * sampling over every group.
 */
import { type GroupSummary, MAX_GROUP_LIST_ITEMS } from "../../protocol/index.js";
import type { ClientService } from "../clients/index.js";
import type { OffsetService } from "../consume/index.js";
import type { LagSamples } from "./lag-samples.js";
import type { SubscriptionGroups } from "./subscription-groups.js";

/** Groups summarized at once: each costs a few reads per topic and queue. */
const GROUPS_IN_FLIGHT = 4;
/** Groups one sampling run covers, at most (pages of 100); the rest wait for the next run. */
export const MAX_SAMPLED_GROUPS = 1000;

export interface GroupViewDeps {
  subscriptionGroups: SubscriptionGroups;
  offsets: OffsetService;
  clients: ClientService;
  lagSamples: LagSamples;
}

export interface SampleReport {
  groups: number;
  totalLag: number;
}

export class GroupViews {
  constructor(private readonly deps: GroupViewDeps) {}

  /** One page of groups, in name order, each summarized. */
  async list(page: { startAfter?: string | undefined; limit: number }): Promise<{
    groups: GroupSummary[];
    nextStartAfter?: string;
  }> {
    const { configs, nextStartAfter } = await this.deps.subscriptionGroups.list(page);
    const groups = await inBatches(configs, GROUPS_IN_FLIGHT, async (config) => {
      const group = config.groupName;
      const [topics, consumers, totalLag] = await Promise.all([
        this.deps.offsets.topicsOf(group),
        this.deps.clients.consumers(group),
        this.totalLag(group),
      ]);
      const subscribed = consumers.flatMap((c) => c.subscriptionDataSet.map((s) => s.topic));
      const allTopics = [...new Set([...topics, ...subscribed])].sort();
      return {
        group,
        topics: allTopics.slice(0, MAX_GROUP_LIST_ITEMS),
        members: consumers.map((c) => c.clientId).slice(0, MAX_GROUP_LIST_ITEMS),
        memberCount: consumers.length,
        messageModel: consumers[0]?.messageModel ?? "",
        totalLag,
        subscriptionGroup: config,
      };
    });
    return nextStartAfter === undefined ? { groups } : { groups, nextStartAfter };
  }

  /** The group's lag: consumerProgress's diffs summed over its topics (no last-consumed-time reads). */
  async totalLag(group: string): Promise<number> {
    const rows = await this.deps.offsets.progress(group, undefined, { lastTimestamps: false });
    return rows.reduce((sum, r) => sum + r.diff, 0);
  }

  /**
   * The groups that consume `topic` (mqadmin's queryTopicConsumeByWho): those with committed offsets on it or a
   * live consumer subscribed to it, in name order; at most MAX_SAMPLED_GROUPS groups are looked at.
   */
  async groupsOfTopic(topic: string): Promise<string[]> {
    const found: string[] = [];
    let startAfter: string | undefined;
    let seen = 0;
    do {
      const page = await this.deps.subscriptionGroups.list({ startAfter, limit: 100 });
      const hits = await inBatches(page.configs, GROUPS_IN_FLIGHT, async ({ groupName }) => {
        if ((await this.deps.offsets.topicsOf(groupName)).includes(topic)) return true;
        const consumers = await this.deps.clients.consumers(groupName);
        return consumers.some((c) => c.subscriptionDataSet.some((s) => s.topic === topic));
      });
      page.configs.forEach((c, i) => {
        if (hits[i] === true) found.push(c.groupName);
      });
      seen += page.configs.length;
      startAfter = page.nextStartAfter;
    } while (startAfter !== undefined && seen < MAX_SAMPLED_GROUPS);
    return found;
  }

  /** The scheduled job: one lag sample per known group (at most MAX_SAMPLED_GROUPS per run). */
  async sampleLag(): Promise<SampleReport> {
    const report: SampleReport = { groups: 0, totalLag: 0 };
    let startAfter: string | undefined;
    do {
      const page = await this.deps.subscriptionGroups.list({ startAfter, limit: 100 });
      const lags = await inBatches(page.configs, GROUPS_IN_FLIGHT, async ({ groupName }) => {
        const lag = await this.totalLag(groupName);
        await this.deps.lagSamples.record(groupName, lag);
        return lag;
      });
      report.groups += lags.length;
      report.totalLag += lags.reduce((a, b) => a + b, 0);
      startAfter = page.nextStartAfter;
    } while (startAfter !== undefined && report.groups < MAX_SAMPLED_GROUPS);
    return report;
  }
}

/** `fn` over `items`, `width` at a time, in order. */
async function inBatches<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}
