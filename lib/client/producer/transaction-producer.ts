/**
 * @module RocketMQ's `TransactionMQProducer`: a half message is stored (invisible to consumers), the local
 * transaction runs, and its outcome commits or rolls the message back. When the outcome stays unknown (the
 * listener said UNKNOW, threw, or the process died), the broker asks a live producer of the same group —
 * in its heartbeat's answer — and `checkLocalTransaction` decides. Producers of a transactional group
 * should heartbeat often enough for the check-back latency they want (`heartbeatBrokerInterval`).
 *
 * @example
 * const producer = new TransactionProducer({ producerGroup: "TxGroup", endpoints: "http://127.0.0.1:9876" });
 * producer.setTransactionListener({
 *   executeLocalTransaction: async (msg, orderId) => (await saveOrder(orderId) ? "COMMIT_MESSAGE" : "ROLLBACK_MESSAGE"),
 *   checkLocalTransaction: async (msgExt) => (await orderExists(msgExt.keys[0]) ? "COMMIT_MESSAGE" : "UNKNOW"),
 * });
 * await producer.start();
 * const result = await producer.sendMessageInTransaction(new Message("TxTopic", "TagA", "order-1", "paid"), "order-1");
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MessageConst } from "../../core/message.js";
import { newMessageId } from "../../core/message-id-node.js";
import type { TransactionCheck } from "../../protocol/index.js";
import { type Message, type MessageExt, type SendResult, toMessageExt, toMessageQueue } from "../message.js";
import type { HeartbeatResponse } from "../transport/index.js";
import { PushChannelClient } from "../transport/index.js";
import { CLIENT_LANGUAGE, CLIENT_VERSION } from "../version.js";
import { isRetryable, prepare } from "./prepare.js";
import { Producer, type ProducerOptions } from "./producer.js";

/** RocketMQ's LocalTransactionState (its spelling: `UNKNOW`). */
export const LocalTransactionState = {
  COMMIT_MESSAGE: "COMMIT_MESSAGE",
  ROLLBACK_MESSAGE: "ROLLBACK_MESSAGE",
  UNKNOW: "UNKNOW",
} as const;
export type LocalTransactionState = (typeof LocalTransactionState)[keyof typeof LocalTransactionState];

/** The application's side of a transaction. Either method may be async; one that throws counts as UNKNOW. */
export interface TransactionListener {
  /** Runs the local transaction after the half message is stored. */
  executeLocalTransaction(msg: Message, arg: unknown): LocalTransactionState | Promise<LocalTransactionState>;
  /** Answers a check-back: what became of the local transaction of this message? */
  checkLocalTransaction(msg: MessageExt): LocalTransactionState | Promise<LocalTransactionState>;
}

export interface TransactionSendResult extends SendResult {
  localTransactionState: LocalTransactionState;
  transactionId: string;
}

export class TransactionProducer extends Producer {
  #listener: TransactionListener | undefined;
  /** Check-backs waiting or being answered, one at a time in arrival order (each transaction once). */
  readonly #checking = new Set<string>();
  #checks: Promise<void> = Promise.resolve();
  /** Set when shutdown begins: heartbeat answers arriving after it start no check-back. */
  #stopping = false;

  /** The push channel, once started. */
  channel: PushChannelClient | undefined;
  readonly #pushChannel: boolean | string;

  /** `pushChannel`: `true` (default) the channel the API announces, a URL, or `false` for heartbeats only. */
  constructor(options: ProducerOptions & { pushChannel?: boolean | string }) {
    super(options);
    this.#pushChannel = options.pushChannel ?? true;
  }

  setTransactionListener(listener: TransactionListener): void {
    this.#listener = listener;
  }

  /**
   * Stores `msg` as a half message, runs `executeLocalTransaction(msg, arg)` and ends the transaction with
   * its outcome. UNKNOW (or a listener that throws) leaves the end to the broker's check-backs.
   */
  async sendMessageInTransaction(msg: Message, arg?: unknown): Promise<TransactionSendResult> {
    this.ensureRunning();
    const listener = this.#listener;
    if (listener === undefined) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "TransactionListener is null");
    if (msg.properties.DELAY !== undefined && msg.properties.DELAY !== "0") {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "a transactional message cannot be delayed");
    }
    // A fresh id per transaction (kept across this call's own retries): a reused Message is a new transaction.
    msg.properties[MessageConst.UNIQ_KEY] = newMessageId();
    const { topic, wire } = prepare(msg);
    const message = wire[0];
    if (message === undefined) throw new NimbusError(ErrorCode.MESSAGE_ILLEGAL, "no message");
    const begin = Date.now();
    const half = await this.#sendHalf(topic, message);
    this.tracer?.sent(topic, wire, begin, { ...half, msgIds: [half.msgId] });
    const state = await settle(() => listener.executeLocalTransaction(msg, arg));
    if (state !== LocalTransactionState.UNKNOW) {
      await this.#end(half.transactionId, state, false);
      this.tracer?.endTransaction(
        { topic, tags: msg.tags, keys: msg.keys, msgId: half.msgId },
        { state, transactionId: half.transactionId, fromTransactionCheck: false },
      );
    }
    return {
      sendStatus: half.sendStatus,
      localTransactionState: state,
      msgId: half.msgId,
      msgIds: [half.msgId],
      transactionId: half.transactionId,
      messageQueue: toMessageQueue(half.messageQueue),
      queueOffset: half.queueOffset,
    };
  }

  /** Up to 1 + retryTimesWhenSendFailed tries within sendMsgTimeout; the UNIQ_KEY makes a retry find its half. */
  async #sendHalf(topic: string, message: Parameters<Producer["api"]["sendHalfMessage"]>[0]["message"]) {
    const begin = Date.now();
    let lastError: unknown;
    let lastBroker: string | undefined;
    for (let attempt = 0; attempt <= this.retryTimesWhenSendFailed; attempt++) {
      const remaining = this.sendMsgTimeout - (Date.now() - begin);
      if (remaining <= 0) break;
      const target = await this.nextQueue(topic, remaining, lastBroker);
      lastBroker = target?.mq.brokerName;
      try {
        return await this.api.sendHalfMessage(
          {
            producerGroup: this.producerGroup,
            topic,
            ...(target === undefined ? {} : { brokerName: target.mq.brokerName, queueId: target.mq.queueId }),
            message,
          },
          { timeoutMs: remaining, baseUrl: target?.baseUrl },
        );
      } catch (err) {
        if (!isRetryable(err)) throw err;
        lastError = err;
      }
    }
    throw new NimbusError(ErrorCode.SYSTEM_BUSY, `the half message to ${topic} was not stored in time`, {
      cause: lastError,
    });
  }

  /**
   * Ends the transaction, retrying a busy or unreachable broker within sendMsgTimeout (an end is idempotent);
   * a failure is reported, not thrown: the broker's check-back settles it.
   */
  async #end(transactionId: string, state: "COMMIT_MESSAGE" | "ROLLBACK_MESSAGE", fromCheck: boolean) {
    const begin = Date.now();
    for (let attempt = 0; ; attempt++) {
      const remaining = this.sendMsgTimeout - (Date.now() - begin);
      try {
        await this.api.endTransaction(
          transactionId,
          { producerGroup: this.producerGroup, commitOrRollback: state, fromTransactionCheck: fromCheck },
          { timeoutMs: Math.max(1, remaining) },
        );
        return;
      } catch (err) {
        if (
          !isRetryable(err) ||
          attempt >= this.retryTimesWhenSendFailed ||
          Date.now() - begin >= this.sendMsgTimeout
        ) {
          this.reportError(err, "transaction");
          return;
        }
      }
    }
  }

  /**
   * Starts as a Producer does, and opens the push channel (unless `pushChannel: false`): a check-back
   * waiting for this producer is a `checks` hint, answered by a heartbeat at once rather than at the next
   * one (docs/push-channel.md). Heartbeats still run every `heartbeatBrokerInterval`.
   */
  override async start(): Promise<void> {
    await super.start();
    if (this.#pushChannel === false) return;
    this.channel = new PushChannelClient({
      api: this.api,
      url: typeof this.#pushChannel === "string" ? this.#pushChannel : undefined,
      registration: () => ({
        type: "register",
        heartbeat: {
          clientId: this.clientId,
          language: CLIENT_LANGUAGE,
          version: CLIENT_VERSION,
          producerDataSet: [this.producerData()],
        },
        queues: [],
      }),
      handlers: {
        queue: () => {},
        members: () => {},
        checks: (group) => {
          if (group !== this.producerGroup) return;
          void this.heartbeatNow().catch((err: unknown) => this.reportError(err, "transaction"));
        },
        up: () => {},
        down: () => {},
      },
      onError: (err) => this.reportError(err, "transaction"),
    });
    this.channel.start();
  }

  /**
   * Takes no new check-back (a heartbeat answered while stopping is left to the next producer of the group,
   * as RocketMQ's stopped check executor refuses it), waits for the ones being answered — their answers and
   * trace records are written — then stops as a Producer does.
   */
  override async shutdown(): Promise<void> {
    this.#stopping = true;
    await this.channel?.close();
    await this.#checks;
    await super.shutdown();
  }

  protected override producerData(): { groupName: string; transactional?: boolean } {
    return { groupName: this.producerGroup, transactional: true };
  }

  protected override handleHeartbeatAnswer(answer: HeartbeatResponse): void {
    if (this.#stopping) return;
    for (const check of answer.transactionChecks) {
      if (check.producerGroup !== this.producerGroup || this.#checking.has(check.transactionId)) continue;
      this.#checking.add(check.transactionId);
      this.#checks = this.#checks.then(() => this.#answerCheck(check));
    }
  }

  /** RocketMQ's checkTransactionState: the half message to the listener, its answer to the broker. */
  async #answerCheck(check: TransactionCheck): Promise<void> {
    const listener = this.#listener;
    try {
      if (listener === undefined) return;
      const half = toMessageExt(await this.api.transactionMessage(check.transactionId, this.producerGroup));
      const state = await settle(() => listener.checkLocalTransaction(half));
      if (state === LocalTransactionState.UNKNOW) return;
      await this.#end(check.transactionId, state, true);
      // As RocketMQ's processTransactionState runs the EndTransaction hook: the check-back's answer is traced.
      this.tracer?.endTransaction(half, { state, transactionId: check.transactionId, fromTransactionCheck: true });
    } catch (err) {
      this.reportError(err, "transaction");
    } finally {
      this.#checking.delete(check.transactionId);
    }
  }
}

/** The listener's answer; a throw or an answer that is not a state counts as UNKNOW, as in RocketMQ. */
async function settle(
  run: () => LocalTransactionState | Promise<LocalTransactionState>,
): Promise<LocalTransactionState> {
  try {
    const state = await run();
    return state === "COMMIT_MESSAGE" || state === "ROLLBACK_MESSAGE" ? state : LocalTransactionState.UNKNOW;
  } catch {
    return LocalTransactionState.UNKNOW;
  }
}
