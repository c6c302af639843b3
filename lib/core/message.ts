/**
 * @module A message as Nimbus stores it (`MessageRecord`, what the batch codec carries) and RocketMQ's
 * system property names (`MessageConst`), spelled as RocketMQ spells them on the wire so that
 * properties read the same to every client.
 */

/**
 * RocketMQ's `MessageConst` property names (the values are the wire names; the keys drop Java's
 * `PROPERTY_` prefix).
 */
export const MessageConst = {
  KEYS: "KEYS",
  TAGS: "TAGS",
  /** "true" (default) or "false": wait for the store before answering. */
  WAIT: "WAIT",
  /** Delay level, 1 to 18 (1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h). */
  DELAY: "DELAY",
  RETRY_TOPIC: "RETRY_TOPIC",
  /** The topic a delayed, retried or half message will be delivered to. */
  REAL_TOPIC: "REAL_TOPIC",
  REAL_QID: "REAL_QID",
  /** "true" on a transaction's half (prepared) message. */
  TRAN_MSG: "TRAN_MSG",
  /** The producer group of a transactional message, asked for the check-back. */
  PGROUP: "PGROUP",
  MIN_OFFSET: "MIN_OFFSET",
  MAX_OFFSET: "MAX_OFFSET",
  BUYER_ID: "BUYER_ID",
  ORIGIN_MESSAGE_ID: "ORIGIN_MESSAGE_ID",
  TRANSFER_FLAG: "TRANSFER_FLAG",
  CORRECTION_FLAG: "CORRECTION_FLAG",
  MQ2_FLAG: "MQ2_FLAG",
  RECONSUME_TIME: "RECONSUME_TIME",
  MSG_REGION: "MSG_REGION",
  TRACE_SWITCH: "TRACE_ON",
  /**
   * The client-made unique message id. Java's constant is `PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX`; the
   * property it names is "UNIQ_KEY".
   */
  UNIQ_KEY: "UNIQ_KEY",
  EXTEND_UNIQ_INFO: "EXTEND_UNIQ_INFO",
  MAX_RECONSUME_TIMES: "MAX_RECONSUME_TIMES",
  CONSUME_START_TIME: "CONSUME_START_TIME",
  TRANSACTION_PREPARED_QUEUE_OFFSET: "TRAN_PREPARED_QUEUE_OFFSET",
  TRANSACTION_ID: "__transactionId__",
  TRANSACTION_CHECK_TIMES: "TRANSACTION_CHECK_TIMES",
  CHECK_IMMUNITY_TIME_IN_SECONDS: "CHECK_IMMUNITY_TIME_IN_SECONDS",
  INSTANCE_ID: "INSTANCE_ID",
  CORRELATION_ID: "CORRELATION_ID",
  MESSAGE_REPLY_TO_CLIENT: "REPLY_TO_CLIENT",
  MESSAGE_TTL: "TTL",
  REPLY_MESSAGE_ARRIVE_TIME: "ARRIVE_TIME",
  PUSH_REPLY_TIME: "PUSH_REPLY_TIME",
  CLUSTER: "CLUSTER",
  MESSAGE_TYPE: "MSG_TYPE",
  SHARDING_KEY: "__SHARDINGKEY",
  TRACE_CONTEXT: "TRACE_CONTEXT",
  /** RocketMQ 5 timer messages: absolute delivery time (ms since the epoch) or a delay in seconds/ms. */
  TIMER_DELIVER_MS: "TIMER_DELIVER_MS",
  TIMER_DELAY_SEC: "TIMER_DELAY_SEC",
  TIMER_DELAY_MS: "TIMER_DELAY_MS",
  BORN_TIMESTAMP: "BORN_TIMESTAMP",
  /** Joins a message's keys in the `KEYS` property: a key itself should not contain it. */
  KEY_SEPARATOR: " ",
} as const;

/**
 * RocketMQ's system property names: every `MessageConst` value but the key separator (a character, not a name).
 * RocketMQ 5's protocol carries them as system properties, never as user properties.
 */
export const SYSTEM_PROPERTY_NAMES: ReadonlySet<string> = new Set(
  Object.values(MessageConst).filter((name) => name !== MessageConst.KEY_SEPARATOR),
);

/**
 * One message as the batch codec carries it. Tags and keys have their own fields; `properties` holds
 * the rest (`UNIQ_KEY`, `DELAY`, `REAL_TOPIC`, ...). Strings are any well-formed UTF-16; each one, and
 * each property name, fits in 65,535 UTF-8 bytes.
 */
export interface MessageRecord {
  /** When the producer made the message, in ms since the epoch. */
  bornTimestamp: number;
  /** RocketMQ's free 32-bit `flag`, not interpreted by the broker. */
  flag: number;
  /** "" when the message has no tag. */
  tags: string;
  keys: string[];
  properties: Record<string, string>;
  body: Uint8Array;
  /** How many times the message was handed back for redelivery (0 for a first delivery). */
  reconsumeTimes: number;
}
