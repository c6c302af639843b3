/**
 * @module What the clients hand their trace dispatcher (RocketMQ's `SendMessageTraceHookImpl`,
 * `ConsumeMessageTraceHookImpl`, `EndTransactionTraceHookImpl`): a send's Pub records, a listener call's
 * SubBefore and SubAfter records (a lite pull consumer's poll: both at once), a transaction's EndTransaction
 * record (its own end or a check-back's answer).
 *
 * @example
 * const tracer = MessageTracer.of({ enableMsgTrace: true }, { api, group: "pg", clientId });
 * const traced = tracer?.listener(listener) ?? listener;
 */
import { MessageConst } from "../../core/message.js";
import { newMessageId } from "../../core/message-id-node.js";
import {
  consumeTraceRecord,
  MAX_TRACE_ERROR_LENGTH,
  type TraceOptions,
  type TraceRecord,
  traceTopicOf,
} from "../../core/trace-record.js";
import type { MessageExt } from "../message.js";
import type { NimbusApi, SendMessage } from "../transport/index.js";
import { TraceDispatcher } from "./trace-dispatcher.js";

/** Where a traced send landed (a SendResult's fields). */
export interface TracedSend {
  msgIds: readonly string[];
  messageQueue: { brokerName: string; queueId: number };
  queueOffset: number;
}

/** What a consume record says of its message (a MessageExt's fields; a SimpleConsumer maps its view to them). */
export type TracedMessage = Pick<
  MessageExt,
  "msgId" | "topic" | "tags" | "keys" | "properties" | "brokerName" | "queueId" | "queueOffset" | "reconsumeTimes"
>;

export class MessageTracer {
  readonly dispatcher: TraceDispatcher;
  readonly #group: string;
  readonly #clientId: () => string;

  constructor(dispatcher: TraceDispatcher, group: string, clientId: () => string) {
    this.dispatcher = dispatcher;
    this.#group = group;
    this.#clientId = clientId;
  }

  /** A tracer when `enableMsgTrace` is on, else undefined. */
  static of(
    options: TraceOptions,
    client: { api: NimbusApi; group: string; clientId: () => string; onError?: (err: unknown) => void },
  ): MessageTracer | undefined {
    if (options.enableMsgTrace !== true) return undefined;
    const traceTopic = traceTopicOf(options);
    const dispatcher = new TraceDispatcher({
      api: client.api,
      traceTopic,
      ...(client.onError ? { onError: client.onError } : {}),
    });
    return new MessageTracer(dispatcher, client.group, client.clientId);
  }

  /** A send's Pub records, one per message, stored or failed; never throws. */
  sent(topic: string, wire: readonly SendMessage[], begin: number, outcome: TracedSend | Error): void {
    if (topic === this.dispatcher.traceTopic) return;
    const costTime = Date.now() - begin;
    const ok = !(outcome instanceof Error);
    this.dispatcher.append(
      wire.map((m, i): TraceRecord => {
        const msgId = m.properties?.[MessageConst.UNIQ_KEY] ?? (ok ? outcome.msgIds[i] : undefined) ?? "";
        const base = this.#base("Pub", begin, msgId);
        return {
          ...base,
          topic,
          tags: m.tags ?? "",
          keys: m.keys ?? [],
          costTime,
          success: ok,
          bodyLength: m.body.byteLength,
          ...(ok
            ? {
                brokerName: outcome.messageQueue.brokerName,
                queueId: outcome.messageQueue.queueId,
                queueOffset: outcome.queueOffset + i,
              }
            : { error: outcome.message.slice(0, MAX_TRACE_ERROR_LENGTH) }),
        };
      }),
    );
  }

  /** A transaction's end (by the app's local transaction, or answering a check-back): one EndTransaction record. */
  endTransaction(
    msg: { topic: string; tags: string; keys: string[]; msgId: string },
    end: { state: string; transactionId: string; fromTransactionCheck: boolean },
  ): void {
    this.dispatcher.append([
      {
        ...this.#base("EndTransaction", Date.now(), msg.msgId),
        topic: msg.topic,
        tags: msg.tags,
        keys: msg.keys,
        costTime: 0,
        success: true,
        transactionState: end.state,
        transactionId: end.transactionId,
        fromTransactionCheck: end.fromTransactionCheck,
      },
    ]);
  }

  /** A listener that records SubBefore for every message of a call, then SubAfter with the listener's answer. */
  listener<C, S extends string>(
    listener: (msgs: MessageExt[], context: C) => S | Promise<S>,
  ): (msgs: MessageExt[], context: C) => Promise<S> {
    return async (msgs, context) => {
      const requestId = newMessageId();
      const begin = Date.now();
      this.consumed(msgs, "SubBefore", begin, { requestId });
      let status: string = "THREW";
      try {
        const answer = await listener(msgs, context);
        status = answer;
        return answer;
      } finally {
        this.consumed(msgs, "SubAfter", begin, { requestId, status });
      }
    };
  }

  /** SubBefore (`status` absent) or SubAfter records of consumed messages. */
  consumed(
    msgs: readonly TracedMessage[],
    traceType: "SubBefore" | "SubAfter",
    begin: number,
    call: { requestId: string; status?: string },
  ): void {
    const by = { groupName: this.#group, clientId: this.#clientId() };
    const end = Date.now();
    this.dispatcher.append(msgs.map((m) => consumeTraceRecord(m, traceType, by, { ...call, begin, end })));
  }

  /**
   * What `poll()` returned, as RocketMQ's `DefaultLitePullConsumerImpl.poll` runs its consume hooks: SubBefore
   * and SubAfter together when the messages are handed over, the status CONSUME_SUCCESS (what the application
   * does with them is not seen), costTime 0.
   */
  polled(msgs: readonly TracedMessage[]): void {
    if (msgs.length === 0) return;
    const call = { requestId: newMessageId(), status: "CONSUME_SUCCESS" };
    const begin = Date.now();
    this.consumed(msgs, "SubBefore", begin, call);
    const by = { groupName: this.#group, clientId: this.#clientId() };
    this.dispatcher.append(msgs.map((m) => consumeTraceRecord(m, "SubAfter", by, { ...call, begin, end: begin })));
  }

  #base(traceType: TraceRecord["traceType"], timeStamp: number, msgId: string) {
    return { traceType, timeStamp, groupName: this.#group, clientId: this.#clientId(), msgId };
  }

  /** Flushes the waiting records (bounded wait). */
  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
