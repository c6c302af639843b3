/**
 * @module Offset routes: query and commit a group's offsets on a topic, release queues and read their owners,
 * orderly consumers' queue locks, reset by time, and the group's consumer progress.
 */
import { resetGroupOffsets } from "../../broker/consume/index.js";
import { queueIds } from "../../broker/names/index.js";
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";
import { servedBroker } from "./broker-scope.js";

export const offsetRoutes = serviceRoutes<HandlerContext>("Offsets", [
  route(endpoints.queryOffsets, async ({ params }, { broker }) => ({
    offsetTable: await broker.offsets.query(params.group, params.topic),
  })),
  route(endpoints.commitOffsets, async ({ params, body }, ctx) => {
    const { broker, role } = ctx;
    // A broker process takes its own queues' offsets (a slave too, while its master is down); the name
    // server and an all-in-one process take any (mqadmin's resetOffset goes through them).
    if (role.kind === "broker") for (const e of body.offsetTable) await servedBroker(ctx, e.brokerName, "read");
    const claim = body.claim === true;
    const author = { clientId: body.clientId ?? "", released: false, claim };
    // Without a client id (an admin reset) and without a claim, the record names no owner.
    if (body.clientId === undefined && !claim) {
      await broker.offsets.commit(params.group, params.topic, body.offsetTable);
      return { offsetTable: await broker.offsets.query(params.group, params.topic) };
    }
    await broker.offsets.commit(params.group, params.topic, body.offsetTable, author);
    return { offsetTable: await broker.offsets.query(params.group, params.topic) };
  }),
  route(endpoints.releaseQueues, async ({ params, body }, { broker }) => {
    await broker.offsets.commit(params.group, params.topic, body.offsetTable, {
      clientId: body.clientId,
      released: true,
    });
    return { code: "SUCCESS" as const };
  }),
  route(endpoints.queueOwners, async ({ params }, { broker }) => ({
    queues: await broker.offsets.owners(params.group, params.topic),
  })),
  route(endpoints.resetOffsetByTime, async ({ params, body }, { broker }) => {
    const reset = await resetGroupOffsets(broker, params.group, params.topic, body.timestamp);
    return { resetAt: reset.resetAt, offsetTable: reset.offsetTable };
  }),
  route(endpoints.lockQueues, async ({ params, body }, { broker }) => {
    await broker.routeCache.checkQueues(params.topic, body.queues);
    return { queues: await broker.locks.lock(params.group, params.topic, body.clientId, body.queues) };
  }),
  route(endpoints.unlockQueues, async ({ params, body }, { broker }) => {
    await broker.routeCache.checkQueues(params.topic, body.queues);
    return { unlocked: await broker.locks.unlock(params.group, params.topic, body.clientId, body.queues) };
  }),
  route(endpoints.queueLocks, async ({ params }, { broker }) => {
    const route = await broker.routeCache.get(params.topic);
    const queues = route.queueDatas.flatMap((qd) =>
      queueIds(qd).map((queueId) => ({ brokerName: qd.brokerName, queueId })),
    );
    return { queues: await broker.locks.holders(params.group, params.topic, queues) };
  }),
  route(endpoints.consumerProgress, async ({ params, query }, { broker, auth, caller }) => {
    const rows = await broker.offsets.progress(params.group, query.topic);
    if (!auth || !caller) return { rows };
    // A group's progress names its topics' counts and store times: only the topics the caller may Get or Sub.
    const visible = await auth.allowedTopics(
      caller,
      rows.map((r) => r.topic),
      ["Get", "Sub"],
    );
    return { rows: rows.filter((r) => visible.has(r.topic)) };
  }),
]);
