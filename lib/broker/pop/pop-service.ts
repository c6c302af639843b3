/**
 * @module POP consumption (RocketMQ 5's SimpleConsumer; docs/pop.md): receive hands out messages of a topic's readable
 * queues with a receipt handle and an invisible time, ack ends them for the group, changeInvisibleDuration moves a
 * message's invisible time (a new handle; the old one dies), and an expired one comes back with deliveryAttempt + 1,
 * or goes to `%DLQ%<group>` past the max attempts. No rebalance, no offsets: receivers of a group share the topic.
 */
import { TIMER_PROPERTIES } from "../../core/delay-levels.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { compileFilter, type MessageFilter } from "../../core/filter/index.js";
import { MessageConst } from "../../core/message.js";
import { validateGroup, validateTopic } from "../../core/names.js";
import { PermName } from "../../core/perm-name.js";
import {
  MAX_ACK_HANDLES,
  MAX_INVISIBLE_MS,
  MAX_LONG_POLL_MS,
  MAX_RECEIVE_MESSAGES,
  MIN_INVISIBLE_MS,
} from "../../protocol/index.js";
import type { Table } from "../../storage/table.js";
import { toPulled } from "../consume/index.js";
import type { RouteCache } from "../names/index.js";
import type { AppendInterest, QueueLog, QueueRef, StoredMessage } from "../queue-log/index.js";
import type { SendBackService } from "../retry/index.js";
import { type AckCode, CheckpointAcks, isCurrent } from "./checkpoint-acks.js";
import { CheckpointStore, popPk } from "./checkpoints.js";
import { GroupStarts } from "./group-starts.js";
import { hintedFirst, LongPolls } from "./long-poll.js";
import type { PopOptions } from "./pop-options.js";
import type {
  PopCollaborators,
  PopGroupConfig,
  PopGroupPolicy,
  PoppedMessage,
  PopReceiveRequest,
} from "./pop-types.js";
import { type Delivery, QueuePopper } from "./queue-pop.js";
import { decodeHandle, encodeHandle, type ReceiptHandle } from "./receipt-handle.js";

export type { AckCode } from "./checkpoint-acks.js";

export class PopService {
  readonly #popper: QueuePopper;
  readonly #groupConfig: PopGroupConfig;
  readonly #interest: AppendInterest | undefined;
  readonly #store: CheckpointStore;
  readonly #polls: LongPolls;
  readonly #starts: GroupStarts;
  readonly #acks: CheckpointAcks;
  readonly #fifo: ReadonlySet<string>;
  #rotation = 0;

  constructor(
    table: Table,
    private readonly routes: RouteCache,
    private readonly queueLog: QueueLog,
    private readonly sendBack: SendBackService,
    private readonly options: PopOptions,
    private readonly now: () => number,
    collaborators: PopCollaborators = {},
  ) {
    this.#groupConfig = collaborators.groupConfig ?? (async () => ({ fifo: false }));
    this.#interest = collaborators.interest;
    this.#store = new CheckpointStore(table, options.retentionMs);
    this.#polls = new LongPolls(options.maxWaiters);
    this.#starts = new GroupStarts(table, options.retentionMs, now);
    this.#fifo = new Set(options.fifoGroups);
    this.#popper = new QueuePopper({
      store: this.#store,
      queueLog,
      settings: options,
      now,
      toDeadLetter: (group, queue, message, attempts) => this.#toDeadLetter(group, queue, message, attempts),
    });
    this.#acks = new CheckpointAcks(this.#store, now, (pk, start, offsets) => this.#popper.acked(pk, start, offsets));
  }

  /** How long polls ended (hint, deadline, timeout, abort): the path a wait took. */
  get wakeCounts(): Readonly<Record<string, number>> {
    return this.#polls.wakeCounts;
  }

  /** How long past its invisible time a message is redelivered (a retry's wake comes after it). */
  get redeliveryGraceMs(): number {
    return this.options.redeliveryGraceMs;
  }

  /** Receives waiting for a message in this process now. */
  get waitingReceives(): number {
    return this.#polls.waiting;
  }

  /** The write path's hint: a queue grew (wired to `QueueLog.onAppended`). */
  queueAppended(q: QueueRef): void {
    this.#polls.appended(q);
  }

  isFifo(group: string): boolean {
    return this.#fifo.has(group);
  }

  /**
   * What a consumer of `group` is told, and how its receives are served: FIFO or not (a `fifoGroups` group or
   * its subscription group's consumeMessageOrderly), its attempts before the DLQ, the longest wait.
   */
  async groupPolicy(group: string, receiving = false): Promise<PopGroupPolicy> {
    const config = await this.#groupConfig(group, receiving);
    return {
      fifo: config.fifo || this.isFifo(group),
      maxDeliveryAttempts: config.maxDeliveryAttempts ?? this.options.maxDeliveryAttempts,
      maxLongPollMs: this.options.maxLongPollMs,
    };
  }

  async receive(req: PopReceiveRequest, signal?: AbortSignal): Promise<{ messages: PoppedMessage[] }> {
    validateGroup(req.group);
    validateTopic(req.topic);
    checkRange("maxMessages", req.maxMessages, 1, MAX_RECEIVE_MESSAGES);
    checkRange("invisibleMs", req.invisibleMs, MIN_INVISIBLE_MS, MAX_INVISIBLE_MS);
    checkRange("longPollMs", req.longPollMs, 0, MAX_LONG_POLL_MS);
    const filter = compileFilter(req.filter);
    const release = req.longPollMs > 0 ? this.#interest?.hold(req.topic, Date.now()) : undefined;
    try {
      return await this.#receive(req, filter, signal);
    } finally {
      release?.();
    }
  }

  async #receive(
    req: PopReceiveRequest,
    filter: MessageFilter,
    signal: AbortSignal | undefined,
  ): Promise<{ messages: PoppedMessage[] }> {
    // An unknown topic is refused before anything is written (the group's start, the group met).
    let queues = await this.#readableQueues(req.topic, req.brokerName);
    const policy = await this.groupPolicy(req.group, true);
    // The group's first receive fixes its start on every queue of the topic, whichever broker this one reads.
    const startedAt = await this.#starts.startedAt(req.group, req.topic);
    const waitUntil = Date.now() + Math.min(req.longPollMs, this.options.maxLongPollMs);
    let hinted: QueueRef[] = [];
    for (let round = 0; ; round++) {
      if (round > 0) queues = await this.#readableQueues(req.topic, req.brokerName);
      const found: Delivery[] = [];
      // After a hint, the queues it named first: what they hold is answered without reading the others.
      const { order, first } = hintedFirst(queues, hinted, this.#rotation++);
      for (let i = 0; i < order.length && found.length < req.maxMessages && !(i === first && found.length > 0); i++) {
        found.push(
          ...(await this.#popper.take(
            req.group,
            order[i] as QueueRef,
            filter,
            req.maxMessages - found.length,
            req.invisibleMs,
            policy.fifo,
            policy.maxDeliveryAttempts,
            startedAt,
          )),
        );
      }
      if (found.length > 0) return { messages: found.map(toPopped) };
      const remaining = waitUntil - Date.now();
      if (remaining <= 0 || signal?.aborted) return { messages: [] };
      const deadline = this.#popper.nextDeadline(req.group, queues);
      hinted = [];
      const wait = () =>
        this.#polls.wait(
          req.topic,
          remaining,
          deadline === undefined ? undefined : deadline - this.now(),
          signal,
          hinted,
        );
      const cause = await (req.whileWaiting === undefined ? wait() : req.whileWaiting(wait));
      // Too many waiting, or the caller is gone: answer now. A hint or a deadline looks again; so does a
      // timeout, once (a send another process served gives no hint here), and then the wait is over.
      if (cause === undefined || cause === "abort") return { messages: [] };
    }
  }

  /**
   * Fixes when `group` starts consuming `topic` (if it has not started yet) and answers that time: every queue
   * of the topic, on every broker, present or added later, delivers the group what is stored from then on (less
   * the clock skew allowance, `redeliveryGraceMs`). Called by a consumer's start, a subscription's save and the
   * first receive, whichever comes first; the topic need not exist yet.
   */
  async start(group: string, topic: string): Promise<number> {
    validateGroup(group);
    validateTopic(topic);
    return this.#starts.startedAt(group, topic);
  }

  /**
   * When this process next knows a message of `group` on `topic` to become receivable again (an invisible time
   * ending, grace included), from the checkpoints its receives have read; undefined when it knows of none.
   */
  async nextDeadline(group: string, topic: string): Promise<number | undefined> {
    return this.#popper.nextDeadline(group, await this.#readableQueues(topic, undefined));
  }

  /** Acks each handle: OK, or INVALID_RECEIPT_HANDLE (forged, stale, expired, acked); one write per checkpoint. */
  async ack(
    group: string,
    topic: string,
    receiptHandles: string[],
  ): Promise<{ entries: { receiptHandle: string; code: AckCode }[] }> {
    validateGroup(group);
    validateTopic(topic);
    checkRange("receiptHandles", receiptHandles.length, 1, MAX_ACK_HANDLES);
    const codes: AckCode[] = receiptHandles.map(() => "INVALID_RECEIPT_HANDLE");
    const byCheckpoint = new Map<string, { pk: string; start: number; at: number[]; handles: ReceiptHandle[] }>();
    for (const [i, raw] of receiptHandles.entries()) {
      let h: ReceiptHandle;
      try {
        h = decodeHandle(raw);
      } catch {
        continue;
      }
      const pk = popPk(group, { topic, brokerName: h.brokerName, queueId: h.queueId });
      const key = `${pk}\n${h.start}`;
      const entry = byCheckpoint.get(key) ?? { pk, start: h.start, at: [], handles: [] };
      entry.at.push(i);
      entry.handles.push(h);
      byCheckpoint.set(key, entry);
    }
    await Promise.all(
      [...byCheckpoint.values()].map(async ({ pk, start, at, handles }) => {
        const answered = await this.#acks.ack(pk, start, handles);
        answered.forEach((code, j) => {
          const i = at[j];
          if (i !== undefined) codes[i] = code;
        });
      }),
    );
    return {
      entries: receiptHandles.map((receiptHandle, i) => ({
        receiptHandle,
        code: codes[i] ?? "INVALID_RECEIPT_HANDLE",
      })),
    };
  }

  /** A new invisible time for one received message: a new handle; the old one is dead. */
  async changeInvisibleDuration(
    group: string,
    topic: string,
    receiptHandle: string,
    invisibleMs: number,
  ): Promise<{ receiptHandle: string; invisibleUntil: number }> {
    validateGroup(group);
    validateTopic(topic);
    checkRange("invisibleMs", invisibleMs, MIN_INVISIBLE_MS, MAX_INVISIBLE_MS);
    const h = decodeHandle(receiptHandle);
    const pk = popPk(group, { topic, brokerName: h.brokerName, queueId: h.queueId });
    for (let tries = 0; tries < 4; tries++) {
      const ck = await this.#store.read(pk, h.start);
      const now = this.now();
      const state = ck?.offsets.get(h.offset);
      if (ck === undefined || state === undefined || !isCurrent(ck, h, now)) throw invalidHandle();
      const round = ck.maxRound + 1;
      const invisibleUntil = now + invisibleMs;
      const entry = { offset: h.offset, deliveryAttempt: state.deliveryAttempt };
      if (await this.#store.createRound(pk, h.start, round, [entry], invisibleUntil, "change")) {
        this.#popper.changed(pk, h.start, round, { ...entry, round, invisibleUntil, kind: "change", acked: false });
        return { receiptHandle: encodeHandle({ ...h, round, invisibleUntil }), invisibleUntil };
      }
    }
    throw new NimbusError(ErrorCode.SYSTEM_BUSY, "the message's checkpoint is changing: try again");
  }

  /**
   * Sends one received message straight to %DLQ%<group> and ends it (gRPC ForwardMessageToDeadLetterQueue), with
   * `properties` added (a subscription's delivery error).
   */
  async forwardToDeadLetter(
    group: string,
    topic: string,
    receiptHandle: string,
    properties: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    validateGroup(group);
    validateTopic(topic);
    const h = decodeHandle(receiptHandle);
    const queue = { topic, brokerName: h.brokerName, queueId: h.queueId };
    const pk = popPk(group, queue);
    const ck = await this.#store.read(pk, h.start);
    const state = ck?.offsets.get(h.offset);
    if (ck === undefined || state === undefined || !isCurrent(ck, h, this.now())) throw invalidHandle();
    const message = (await this.queueLog.read(queue, h.offset, { maxMessages: 1 })).messages[0];
    if (message?.queueOffset === h.offset) {
      await this.#toDeadLetter(group, queue, message, state.deliveryAttempt, properties);
    }
    await this.#store.ack(pk, h.start, [{ offset: h.offset, round: h.round }], this.now());
    this.#popper.acked(pk, h.start, [h.offset]);
  }

  async #readableQueues(topic: string, brokerName: string | undefined): Promise<QueueRef[]> {
    const route = await this.routes.get(topic);
    return route.queueDatas
      .filter((qd) => PermName.isReadable(qd.perm) && (brokerName === undefined || qd.brokerName === brokerName))
      .flatMap((qd) =>
        Array.from({ length: qd.readQueueNums }, (_, queueId) => ({ topic, brokerName: qd.brokerName, queueId })),
      );
  }

  /** As every dead letter: the message keeps its id, body and properties and records its origin. */
  async #toDeadLetter(
    group: string,
    queue: QueueRef,
    message: StoredMessage,
    deliveryAttempt: number,
    added: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    const { queueOffset: _o, storeTimestamp: _s, ...record } = message;
    const msgId =
      record.properties[MessageConst.UNIQ_KEY] ?? `${queue.brokerName}-${queue.queueId}-${message.queueOffset}`;
    const properties: Record<string, string> = { ...record.properties, ...added };
    properties[MessageConst.RETRY_TOPIC] ??= queue.topic;
    properties[MessageConst.ORIGIN_MESSAGE_ID] ??= msgId;
    properties[MessageConst.UNIQ_KEY] = msgId;
    for (const timer of TIMER_PROPERTIES) delete properties[timer];
    const reconsumeTimes = Math.max(0, deliveryAttempt - 1);
    await this.sendBack.toDeadLetterQueue(group, queue.brokerName, { ...record, properties, reconsumeTimes }, msgId);
  }
}

function toPopped(d: Delivery): PoppedMessage {
  const pulled = toPulled(d.queue, d.message);
  const receiptHandle = encodeHandle({
    brokerName: d.queue.brokerName,
    queueId: d.queue.queueId,
    start: d.start,
    offset: d.message.queueOffset,
    round: d.round,
    nonce: d.nonce,
    invisibleUntil: d.invisibleUntil,
  });
  return {
    ...pulled,
    reconsumeTimes: d.deliveryAttempt - 1,
    receiptHandle,
    deliveryAttempt: d.deliveryAttempt,
    invisibleUntil: d.invisibleUntil,
  };
}

const invalidHandle = () =>
  new NimbusError(
    ErrorCode.INVALID_RECEIPT_HANDLE,
    "the receipt handle is not current: acked, expired, changed or redelivered",
  );

function checkRange(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `${name} must be an integer from ${min} to ${max}`);
  }
}
