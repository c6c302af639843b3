/**
 * @module The data plane's routes: send (one batch into one queue), send-back (a consumer's failed message
 * into its group's retry or dead-letter topic) and pull (answered at once, no long polling), each on the
 * broker this process serves (broker-scope.ts). Sends and pulls also move due delayed messages to their
 * queues (at most one sweep per process per timerSweepIntervalMs, alongside the request: timer-store.ts).
 */

import { MASTER_ID } from "../../core/topology.js";
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";
import { servedBroker } from "./broker-scope.js";
import { popRoutes } from "./pop.js";
import { queryRoutes } from "./query.js";

export const sendRoutes = serviceRoutes<HandlerContext>("Send", [
  route(endpoints.send, async ({ body }, ctx) => {
    const brokerName = await servedBroker(ctx, body.brokerName, "write");
    return withSweep(ctx, ctx.broker.sender.send({ ...body, brokerName }));
  }),
  route(endpoints.sendBack, async ({ body }, ctx) => {
    await servedBroker(ctx, body.brokerName, "write");
    return ctx.broker.sendBack.sendBack(body);
  }),
]);

/**
 * `work`, with a sweep of due delayed messages alongside it on a process that writes (not on a slave). The
 * answer waits for the sweep, failed or not: a Lambda freezes what runs after its answer.
 */
async function withSweep<T>(ctx: HandlerContext, work: Promise<T>): Promise<T> {
  const { role } = ctx;
  const slave = role.kind === "broker" && role.brokerId !== MASTER_ID;
  const sweep = slave ? Promise.resolve() : ctx.broker.timers.sweepAlongside();
  try {
    return await work;
  } finally {
    await sweep;
  }
}

export const pullRoutes = serviceRoutes<HandlerContext>("Pull", [
  route(endpoints.pull, async ({ body }, ctx) => {
    await servedBroker(ctx, body.brokerName, "read");
    const answer = await withSweep(ctx, ctx.broker.puller.pull(body));
    // A slave may lag its master (a replica a second behind): an offset past its end is not illegal there,
    // only not here yet. Correcting it would move the consumer back (RocketMQ's offsetCheckInSlave=false).
    const { role } = ctx;
    const slave = role.kind === "broker" && role.brokerId !== MASTER_ID;
    if (slave && answer.pullStatus === "OFFSET_ILLEGAL" && body.queueOffset > answer.maxOffset) {
      return { ...answer, pullStatus: "NO_NEW_MSG" as const, nextBeginOffset: body.queueOffset };
    }
    return answer;
  }),
  ...popRoutes,
  ...queryRoutes,
]);
