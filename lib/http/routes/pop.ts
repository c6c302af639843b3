/**
 * @module POP consumption's routes (RocketMQ 5's SimpleConsumer): receive (long polling up to the request's
 * awaitDurationMs, capped by the deployment's popMaxLongPollMs), a consumer's start, ack and change-invisible-duration, each a
 * call of the broker's `pop` service. Receives read the queues of the broker this process serves.
 */
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route } from "../route.js";
import { refuseOnSlave, servedBroker } from "./broker-scope.js";

/** What a receive hands out when the request names no number (RocketMQ 5's client default is 16 here too). */
export const DEFAULT_RECEIVE_MESSAGES = 16;

export const popRoutes = [
  route(endpoints.receive, async ({ body }, ctx: HandlerContext) => {
    // A receive writes its checkpoint: masters only, as RocketMQ's POP.
    const brokerName = await servedBroker(ctx, body.brokerName, "write");
    return ctx.broker.pop.receive({
      group: body.consumerGroup,
      topic: body.topic,
      filter: body.filterExpression ?? { type: "TAG", expression: "*" },
      maxMessages: body.maxMessages ?? DEFAULT_RECEIVE_MESSAGES,
      invisibleMs: body.invisibleDurationMs,
      longPollMs: body.awaitDurationMs ?? 0,
      brokerName,
      ...(body.clientId === undefined ? {} : { clientId: body.clientId }),
      ...(ctx.suspend === undefined ? {} : { whileWaiting: ctx.suspend }),
    });
  }),
  route(endpoints.startReceiving, async ({ body }, ctx: HandlerContext) => {
    refuseOnSlave(ctx, "start consumers");
    const startedAt = await ctx.broker.pop.start(body.consumerGroup, body.topic);
    return { consumerGroup: body.consumerGroup, topic: body.topic, startedAt };
  }),
  route(endpoints.ack, async ({ body }, ctx: HandlerContext) => {
    refuseOnSlave(ctx, "take acks");
    return ctx.broker.pop.ack(body.consumerGroup, body.topic, body.receiptHandles);
  }),
  route(endpoints.changeInvisibleDuration, async ({ body }, ctx: HandlerContext) => {
    refuseOnSlave(ctx, "change invisible times");
    return ctx.broker.pop.changeInvisibleDuration(
      body.consumerGroup,
      body.topic,
      body.receiptHandle,
      body.invisibleDurationMs,
    );
  }),
];
