/**
 * @module The consumer RPCs on POP (the broker's `pop` service): ReceiveMessage (server-streaming: a status,
 * then each message with its receipt handle, delivery attempt and body digest), AckMessage,
 * ChangeInvisibleDuration (a new handle, which the client acks with) and ForwardMessageToDeadLetterQueue.
 * A receive long-polls at most 20 s and always ends before the client's deadline (its request timeout plus
 * its await duration); an empty answer is MESSAGE_NOT_FOUND, as RocketMQ's proxy answers it. Receives waiting
 * at once are bounded (TOO_MANY_REQUESTS past the bound); a client that goes away cancels its receive.
 */

import { MAX_LONG_POLL_MS, MAX_RECEIVE_MESSAGES } from "../protocol/index.js";
import { consumeNeeds } from "./access.js";
import type { CallContext } from "./call-context.js";
import { okStatus, status, statusOfError, type WireStatus } from "./codes.js";
import { decodeRequest } from "./decode.js";
import type { GrpcCall } from "./grpc-call.js";
import { encodeMessage } from "./messages.js";
import type { ConsumerPolicy } from "./settings.js";
import {
  AckMessageRequestSchema,
  ChangeInvisibleDurationRequestSchema,
  ForwardMessageToDeadLetterQueueRequestSchema,
  ReceiveMessageRequestSchema,
  toMs,
} from "./wire.js";

/** What this adapter needs of the broker's POP service (INTERFACES.md). */
export interface PopPort {
  receive(
    req: {
      group: string;
      topic: string;
      filter: { type: "TAG" | "SQL92"; expression: string };
      maxMessages: number;
      invisibleMs: number;
      longPollMs: number;
      clientId?: string;
      brokerName?: string | undefined;
    },
    signal?: AbortSignal,
  ): Promise<{
    messages: (Parameters<typeof encodeMessage>[0] & {
      receiptHandle: string;
      deliveryAttempt: number;
      invisibleUntil: number;
    })[];
  }>;
  ack(group: string, topic: string, handles: string[]): Promise<{ entries: { receiptHandle: string; code: string }[] }>;
  changeInvisibleDuration(
    group: string,
    topic: string,
    handle: string,
    invisibleMs: number,
  ): Promise<{ receiptHandle: string; invisibleUntil: number }>;
  forwardToDeadLetter(group: string, topic: string, handle: string): Promise<void>;
  /** What a consumer of `group` is told in its Settings (settings.ts). */
  groupPolicy(group: string): Promise<ConsumerPolicy>;
}

/** A PushConsumer's receive names no invisible time (it renews): the time it gets. */
export const DEFAULT_INVISIBLE_MS = 30_000;
/** A receive ends this long before the client's deadline, so the client gets its answer. */
const DEADLINE_MARGIN_MS = 1_000;

export class Receives {
  #waiting = 0;
  constructor(
    private readonly pop: PopPort,
    private readonly maxWaiting: number,
  ) {}

  /** ReceiveMessage: writes its answers on `call` and ends it, whatever happens. */
  async serve(call: GrpcCall, ctx: CallContext): Promise<void> {
    const answer = (s: WireStatus) => {
      if (!call.writableEnded) {
        call.write({ status: s });
        call.end();
      }
    };
    if (this.#waiting >= this.maxWaiting) {
      answer(status("TOO_MANY_REQUESTS", `over ${this.maxWaiting} receives waiting here; retry`));
      return;
    }
    this.#waiting++;
    const abort = new AbortController();
    const cancel = () => abort.abort();
    call.on("cancelled", cancel);
    if (call.cancelled) abort.abort();
    try {
      const req = decodeRequest(ReceiveMessageRequestSchema, call.request);
      const group = req.group.name;
      const topic = req.messageQueue.topic.name;
      await ctx.authorize(consumeNeeds(group, topic));
      const untilDeadline = call.getDeadline() - Date.now();
      const asked = req.longPollingTimeout === undefined ? MAX_LONG_POLL_MS : toMs(req.longPollingTimeout);
      const longPollMs = Math.max(0, Math.min(asked, MAX_LONG_POLL_MS, untilDeadline - DEADLINE_MARGIN_MS));
      const invisibleMs = req.invisibleDuration === undefined ? DEFAULT_INVISIBLE_MS : toMs(req.invisibleDuration);
      const expression = req.filterExpression?.expression || "*";
      const brokerName = req.messageQueue.broker?.name || undefined;
      const { messages } = await this.pop.receive(
        {
          group,
          topic,
          filter: { type: req.filterExpression?.type === "SQL" ? "SQL92" : "TAG", expression },
          maxMessages: Math.min(Math.max(req.batchSize, 1), MAX_RECEIVE_MESSAGES),
          invisibleMs,
          longPollMs,
          ...(ctx.clientId === undefined ? {} : { clientId: ctx.clientId }),
          brokerName,
        },
        abort.signal,
      );
      if (call.cancelled) return;
      if (messages.length === 0) {
        answer(status("MESSAGE_NOT_FOUND", "no new message"));
        return;
      }
      call.write({ status: okStatus() });
      for (const m of messages) {
        call.write({
          message: encodeMessage(m, {
            receiptHandle: m.receiptHandle,
            deliveryAttempt: m.deliveryAttempt,
            invisibleMs: Math.max(0, m.invisibleUntil - Date.now()),
          }),
        });
      }
      call.end();
    } catch (err) {
      answer(statusOfError(err));
    } finally {
      call.off("cancelled", cancel);
      this.#waiting--;
    }
  }
}

export async function ackMessage(raw: unknown, ctx: CallContext, pop: PopPort) {
  const req = decodeRequest(AckMessageRequestSchema, raw);
  const group = req.group.name;
  const topic = req.topic.name;
  await ctx.authorize(consumeNeeds(group, topic));
  const { entries } = await pop.ack(
    group,
    topic,
    req.entries.map((e) => e.receiptHandle),
  );
  const results = entries.map((e, i) => ({
    messageId: req.entries[i]?.messageId ?? "",
    receiptHandle: e.receiptHandle,
    status:
      e.code === "OK" ? okStatus() : status("INVALID_RECEIPT_HANDLE", "the receipt handle is stale, expired or forged"),
  }));
  const failed = results.find((r) => r.status.code !== "OK");
  return { status: failed?.status ?? okStatus(), entries: results };
}

export async function changeInvisibleDuration(raw: unknown, ctx: CallContext, pop: PopPort) {
  const req = decodeRequest(ChangeInvisibleDurationRequestSchema, raw);
  const group = req.group.name;
  const topic = req.topic.name;
  await ctx.authorize(consumeNeeds(group, topic));
  const changed = await pop.changeInvisibleDuration(group, topic, req.receiptHandle, toMs(req.invisibleDuration));
  return { status: okStatus(), receiptHandle: changed.receiptHandle };
}

export async function forwardToDeadLetter(raw: unknown, ctx: CallContext, pop: PopPort) {
  const req = decodeRequest(ForwardMessageToDeadLetterQueueRequestSchema, raw);
  const group = req.group.name;
  const topic = req.topic.name;
  await ctx.authorize(consumeNeeds(group, topic));
  await pop.forwardToDeadLetter(group, topic, req.receiptHandle);
  return { status: okStatus() };
}
