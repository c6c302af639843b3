/**
 * @module RocketMQ's request and response codes this door speaks, and the one table of its answers: each Nimbus
 * `ErrorCode` as a RocketMQ `ResponseCode` (as lib/protocol/http-status.ts maps them to HTTP statuses and
 * lib/grpc/codes.ts to gRPC codes). The producer retries another broker on TOPIC_NOT_EXIST, SERVICE_NOT_AVAILABLE,
 * SYSTEM_ERROR and NO_PERMISSION; a bad message or parameter is MESSAGE_ILLEGAL, which it does not retry.
 */
import { type ErrorCode, NimbusError } from "../core/errors.js";

export const RequestCode = {
  SEND_MESSAGE: 10,
  PULL_MESSAGE: 11,
  QUERY_MESSAGE: 12,
  QUERY_CONSUMER_OFFSET: 14,
  UPDATE_CONSUMER_OFFSET: 15,
  UPDATE_AND_CREATE_TOPIC: 17,
  GET_ALL_TOPIC_CONFIG: 21,
  GET_BROKER_RUNTIME_INFO: 28,
  SEARCH_OFFSET_BY_TIMESTAMP: 29,
  GET_MAX_OFFSET: 30,
  GET_MIN_OFFSET: 31,
  GET_EARLIEST_MSG_STORETIME: 32,
  VIEW_MESSAGE_BY_ID: 33,
  HEART_BEAT: 34,
  UNREGISTER_CLIENT: 35,
  CONSUMER_SEND_MSG_BACK: 36,
  END_TRANSACTION: 37,
  GET_CONSUMER_LIST_BY_GROUP: 38,
  CHECK_TRANSACTION_STATE: 39,
  NOTIFY_CONSUMER_IDS_CHANGED: 40,
  LOCK_BATCH_MQ: 41,
  UNLOCK_BATCH_MQ: 42,
  GET_ROUTEINFO_BY_TOPIC: 105,
  GET_BROKER_CLUSTER_INFO: 106,
  GET_TOPIC_STATS_INFO: 202,
  GET_CONSUMER_CONNECTION_LIST: 203,
  GET_ALL_TOPIC_LIST_FROM_NAMESERVER: 206,
  GET_CONSUME_STATS: 208,
  RESET_CONSUMER_CLIENT_OFFSET: 220,
  INVOKE_BROKER_TO_RESET_OFFSET: 222,
  DELETE_TOPIC_IN_BROKER: 215,
  DELETE_TOPIC_IN_NAMESRV: 216,
  QUERY_TOPIC_CONSUME_BY_WHO: 300,
  GET_CONSUMER_RUNNING_INFO: 307,
  SEND_MESSAGE_V2: 310,
  SEND_BATCH_MESSAGE: 320,
  LITE_PULL_MESSAGE: 361,
} as const;

export const ResponseCode = {
  SUCCESS: 0,
  SYSTEM_ERROR: 1,
  SYSTEM_BUSY: 2,
  REQUEST_CODE_NOT_SUPPORTED: 3,
  MESSAGE_ILLEGAL: 13,
  SERVICE_NOT_AVAILABLE: 14,
  NO_PERMISSION: 16,
  TOPIC_NOT_EXIST: 17,
  TOPIC_EXIST_ALREADY: 18,
  PULL_NOT_FOUND: 19,
  PULL_RETRY_IMMEDIATELY: 20,
  PULL_OFFSET_MOVED: 21,
  QUERY_NOT_FOUND: 22,
  SUBSCRIPTION_PARSE_FAILED: 23,
  SUBSCRIPTION_NOT_EXIST: 24,
  SUBSCRIPTION_GROUP_NOT_EXIST: 26,
  CONSUMER_NOT_ONLINE: 206,
  CONSUME_MSG_TIMEOUT: 207,
} as const;

/** Each Nimbus error as the ResponseCode a RocketMQ client acts on. */
export const RESPONSE_CODE: Readonly<Record<ErrorCode, number>> = {
  SYSTEM_ERROR: ResponseCode.SYSTEM_ERROR,
  SYSTEM_BUSY: ResponseCode.SYSTEM_BUSY,
  REQUEST_CODE_NOT_SUPPORTED: ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
  MESSAGE_ILLEGAL: ResponseCode.MESSAGE_ILLEGAL,
  PARAMETER_ILLEGAL: ResponseCode.MESSAGE_ILLEGAL,
  UNAUTHENTICATED: ResponseCode.NO_PERMISSION,
  NO_PERMISSION: ResponseCode.NO_PERMISSION,
  TOPIC_NOT_EXIST: ResponseCode.TOPIC_NOT_EXIST,
  TOPIC_EXIST_ALREADY: ResponseCode.TOPIC_EXIST_ALREADY,
  SUBSCRIPTION_GROUP_NOT_EXIST: ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
  QUERY_NOT_FOUND: ResponseCode.QUERY_NOT_FOUND,
  SERVICE_NOT_AVAILABLE: ResponseCode.SERVICE_NOT_AVAILABLE,
  MESSAGE_BODY_TOO_LARGE: ResponseCode.MESSAGE_ILLEGAL,
  // A lost race between two writers: worth the client's retry.
  CONDITION_FAILED: ResponseCode.SYSTEM_ERROR,
  ITEM_TOO_LARGE: ResponseCode.MESSAGE_ILLEGAL,
  INVALID_RANGE: ResponseCode.SYSTEM_ERROR,
  OBJECT_NOT_FOUND: ResponseCode.SYSTEM_ERROR,
  DATA_CORRUPTED: ResponseCode.SYSTEM_ERROR,
  WRONG_BROKER: ResponseCode.SERVICE_NOT_AVAILABLE,
  INVALID_RECEIPT_HANDLE: ResponseCode.MESSAGE_ILLEGAL,
};

/** Remarks are cut to this many characters. */
export const MAX_REMARK = 1024;

export interface Answer {
  code: number;
  remark?: string | undefined;
  extFields?: Record<string, string> | undefined;
  body?: Uint8Array | undefined;
}

export const success = (extFields?: Record<string, string>, body?: Uint8Array): Answer => ({
  code: ResponseCode.SUCCESS,
  ...(extFields && { extFields }),
  ...(body && { body }),
});

export const jsonBody = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value), "utf8");

export function refusal(code: number, remark: string): Answer {
  return { code, remark: remark.length > MAX_REMARK ? `${remark.slice(0, MAX_REMARK)}…` : remark };
}

/** A refusal the door makes while decoding a request (no broker call made). */
export class Refused extends Error {
  override readonly name = "Refused";
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const badHeader = (message: string) => new Refused(ResponseCode.MESSAGE_ILLEGAL, message);

/** The answer to a failure: a NimbusError by the table, anything else a system error (logged, not told). */
export function answerOfError(err: unknown): Answer {
  if (err instanceof Refused) return refusal(err.code, err.message);
  if (err instanceof NimbusError) return refusal(RESPONSE_CODE[err.code], err.message);
  console.error("nimbus remoting: unexpected error", err);
  return refusal(ResponseCode.SYSTEM_ERROR, "internal error");
}
