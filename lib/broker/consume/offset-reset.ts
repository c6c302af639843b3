/**
 * @module mqadmin's resetOffsetByTime: every queue of a topic gets, as the group's offset, the first message
 * stored at or after a time (`first`: the queue's min offset; `now`: its max offset), found per queue by a
 * binary search of one-message reads (store times grow with the offset within a queue). The offsets are
 * committed as an admin write (no owner), and the reset is recorded in the group's consumer partition, which
 * every live consumer reads with its membership poll: a consumer seeing a reset newer than the ones it knows
 * moves its queues of the topic to the reset's offsets at once (docs/client.md "Offset resets").
 *
 * @example
 * const reset = await resetOffsetByTime({ offsets, clients, queueLog, routes, now }, "g", "T", 1700000000000);
 */
import type { OffsetEntry, OffsetReset } from "../../protocol/index.js";
import type { ClientService } from "../clients/index.js";
import type { RouteCache } from "../names/index.js";
import { queueIds } from "../names/index.js";
import type { QueueLog, QueueRef } from "../queue-log/index.js";
import type { OffsetService } from "./offset-service.js";

export interface OffsetResetDeps {
  offsets: OffsetService;
  clients: ClientService;
  queueLog: QueueLog;
  routes: RouteCache;
  now: () => number;
}

/** The offset of the first message of `q` stored at or after `timestamp`; the max offset when none is. */
export async function searchOffsetByTime(queueLog: QueueLog, q: QueueRef, timestamp: number): Promise<number> {
  const status = await queueLog.status(q);
  let lo = status.minOffset;
  let hi = status.maxOffset;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const read = await queueLog.read(q, mid, { maxMessages: 1 });
    const found = read.messages[0];
    if (found === undefined) {
      // Retention removed messages below `mid` meanwhile, or nothing readable there: search above what is left.
      if (read.minOffset > mid) lo = read.minOffset;
      else hi = mid;
    } else if (found.storeTimestamp < timestamp) lo = found.queueOffset + 1;
    else hi = Math.min(mid, found.queueOffset);
  }
  return lo;
}

export interface OffsetResetOptions {
  /**
   * False: a queue whose committed offset is already before the target keeps it (mqadmin's `-f false`: a reset
   * only moves back). Default true: every queue moves to the target.
   */
  force?: boolean;
}

/** Resets the group's offsets of every queue of `topic` to `at` and records the reset for live consumers. */
export async function resetOffsetByTime(
  deps: OffsetResetDeps,
  group: string,
  topic: string,
  at: number | "now" | "first",
  options: OffsetResetOptions = {},
): Promise<OffsetReset> {
  const route = await deps.routes.get(topic);
  const queues = route.queueDatas.flatMap((qd) =>
    queueIds(qd).map((queueId) => ({ topic, brokerName: qd.brokerName, queueId })),
  );
  const resetAt = deps.now();
  const committed =
    options.force === false
      ? new Map((await deps.offsets.query(group, topic)).map((e) => [`${e.brokerName}\n${e.queueId}`, e.offset]))
      : undefined;
  const offsetTable: OffsetEntry[] = await Promise.all(
    queues.map(async (q) => {
      const target =
        at === "first"
          ? (await deps.queueLog.status(q)).minOffset
          : at === "now"
            ? await deps.queueLog.maxOffset(q)
            : await searchOffsetByTime(deps.queueLog, q, at);
      const current = committed?.get(`${q.brokerName}\n${q.queueId}`);
      const offset = current !== undefined && current < target ? current : target;
      return { brokerName: q.brokerName, queueId: q.queueId, offset };
    }),
  );
  await deps.offsets.commit(group, topic, offsetTable);
  const reset = { topic, resetAt, offsetTable };
  await deps.clients.recordOffsetReset(group, reset);
  return reset;
}

/** What `resetGroupOffsets` needs of the broker: the reset's services and the push channel's group notice. */
export interface GroupResetBroker {
  offsets: OffsetService;
  clients: ClientService;
  queueLog: QueueLog;
  routeCache: RouteCache;
  channel: { groupChanged(group: string): Promise<void> };
  now(): number;
}

/**
 * `resetOffsetByTime` as every door asks it of a broker: then the group's members on the push channel read the
 * reset at once (a `members` hint: they read the group's connection, which carries it), as their membership poll
 * would without the channel.
 */
export async function resetGroupOffsets(
  broker: GroupResetBroker,
  group: string,
  topic: string,
  at: number | "now" | "first",
  options: OffsetResetOptions = {},
): Promise<OffsetReset> {
  const reset = await resetOffsetByTime(
    {
      offsets: broker.offsets,
      clients: broker.clients,
      queueLog: broker.queueLog,
      routes: broker.routeCache,
      now: () => broker.now(),
    },
    group,
    topic,
    at,
    options,
  );
  await broker.channel.groupChanged(group);
  return reset;
}
