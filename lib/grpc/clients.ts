/**
 * @module Heartbeat and NotifyClientTermination. A heartbeat keeps nothing of its own (the Telemetry stream's
 * Settings say what the client is, and its refresh keeps it live); it makes the client's stream here take its
 * check-backs at once. Termination removes the client from its groups at once (`POST /unregister`), so a
 * check-back goes to a producer that is still there and a group rebalances without waiting 120 s.
 */
import { consumeNeeds, unregisterNeeds } from "./access.js";
import type { CallContext } from "./call-context.js";
import { okStatus } from "./codes.js";
import { decodeRequest } from "./decode.js";
import type { TelemetrySessions } from "./telemetry.js";
import { HeartbeatRequestSchema, NotifyClientTerminationRequestSchema } from "./wire.js";

export async function heartbeat(raw: unknown, ctx: CallContext, sessions: TelemetrySessions) {
  const req = decodeRequest(HeartbeatRequestSchema, raw);
  const clientId = ctx.requireClientId();
  const group = req.group?.name;
  if (group !== undefined && group !== "") {
    for (const topic of sessions.settingsOf(clientId)?.subscription?.subscriptions ?? [])
      await ctx.authorize(consumeNeeds(group, topic.topic.name));
  }
  sessions.heartbeat(clientId);
  return { status: okStatus() };
}

export async function notifyClientTermination(raw: unknown, ctx: CallContext, sessions: TelemetrySessions) {
  const req = decodeRequest(NotifyClientTerminationRequestSchema, raw);
  const clientId = ctx.requireClientId();
  const consumerGroup = req.group?.name;
  const clients = ctx.broker.clients;
  if (consumerGroup !== undefined && consumerGroup !== "") {
    await ctx.authorize(unregisterNeeds(clientId, { consumerGroup }));
    await clients.unregister(clientId, { consumerGroup });
  } else {
    const topics = (sessions.settingsOf(clientId)?.publishing?.topics ?? []).map((t) => t.name);
    for (const producerGroup of topics) await ctx.authorize(unregisterNeeds(clientId, { producerGroup }));
    await Promise.all(topics.map((producerGroup) => clients.unregister(clientId, { producerGroup })));
  }
  sessions.terminated(clientId);
  return { status: okStatus() };
}
