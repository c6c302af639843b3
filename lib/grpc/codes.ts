/**
 * @module The one table of this adapter's answers: each Nimbus `ErrorCode` as an `apache.rocketmq.v2.Code`
 * (as lib/protocol/http-status.ts maps them to HTTP statuses). RocketMQ's clients read the code of the
 * `Status` in every response; the gRPC status stays OK unless the call itself could not be carried (an
 * undecodable message, a call this server does not know, a stream refused for capacity).
 */
import { type ErrorCode, NimbusError } from "../core/errors.js";

/** The `apache.rocketmq.v2.Code` names this adapter answers with. */
export type RocketCode =
  | "OK"
  | "BAD_REQUEST"
  | "ILLEGAL_TOPIC"
  | "ILLEGAL_CONSUMER_GROUP"
  | "ILLEGAL_MESSAGE_GROUP"
  | "INVALID_TRANSACTION_ID"
  | "ILLEGAL_DELIVERY_TIME"
  | "ILLEGAL_INVISIBLE_TIME"
  | "ILLEGAL_FILTER_EXPRESSION"
  | "INVALID_RECEIPT_HANDLE"
  | "MESSAGE_PROPERTY_CONFLICT_WITH_TYPE"
  | "MESSAGE_CORRUPTED"
  | "CLIENT_ID_REQUIRED"
  | "ILLEGAL_POLLING_TIME"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "MESSAGE_NOT_FOUND"
  | "TOPIC_NOT_FOUND"
  | "CONSUMER_GROUP_NOT_FOUND"
  | "PAYLOAD_TOO_LARGE"
  | "MESSAGE_BODY_TOO_LARGE"
  | "MESSAGE_BODY_EMPTY"
  | "PRECONDITION_FAILED"
  | "TOO_MANY_REQUESTS"
  | "MESSAGE_PROPERTIES_TOO_LARGE"
  | "INTERNAL_ERROR"
  | "INTERNAL_SERVER_ERROR"
  | "NOT_IMPLEMENTED"
  | "PROXY_TIMEOUT"
  | "UNSUPPORTED";

export const ROCKET_CODE: Readonly<Record<ErrorCode, RocketCode>> = {
  SYSTEM_ERROR: "INTERNAL_SERVER_ERROR",
  // The clients back off and retry on TOO_MANY_REQUESTS, as RocketMQ's proxy answers a busy broker.
  SYSTEM_BUSY: "TOO_MANY_REQUESTS",
  REQUEST_CODE_NOT_SUPPORTED: "NOT_IMPLEMENTED",
  MESSAGE_ILLEGAL: "BAD_REQUEST",
  PARAMETER_ILLEGAL: "BAD_REQUEST",
  UNAUTHENTICATED: "UNAUTHORIZED",
  NO_PERMISSION: "FORBIDDEN",
  TOPIC_NOT_EXIST: "TOPIC_NOT_FOUND",
  TOPIC_EXIST_ALREADY: "PRECONDITION_FAILED",
  SUBSCRIPTION_GROUP_NOT_EXIST: "CONSUMER_GROUP_NOT_FOUND",
  QUERY_NOT_FOUND: "NOT_FOUND",
  SERVICE_NOT_AVAILABLE: "INTERNAL_SERVER_ERROR",
  MESSAGE_BODY_TOO_LARGE: "MESSAGE_BODY_TOO_LARGE",
  CONDITION_FAILED: "PRECONDITION_FAILED",
  ITEM_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  INVALID_RANGE: "BAD_REQUEST",
  OBJECT_NOT_FOUND: "NOT_FOUND",
  DATA_CORRUPTED: "MESSAGE_CORRUPTED",
  WRONG_BROKER: "INTERNAL_SERVER_ERROR",
  INVALID_RECEIPT_HANDLE: "INVALID_RECEIPT_HANDLE",
};

export interface WireStatus {
  code: RocketCode;
  message: string;
}

/** Status messages are cut to this many characters. */
export const MAX_STATUS_MESSAGE = 512;

export const okStatus = (): WireStatus => ({ code: "OK", message: "OK" });

export function status(code: RocketCode, message: string): WireStatus {
  return { code, message: message.length > MAX_STATUS_MESSAGE ? `${message.slice(0, MAX_STATUS_MESSAGE)}…` : message };
}

/** A refusal the adapter makes while decoding, with the protocol's own code for it (no broker call made). */
export class Refused extends Error {
  override readonly name = "Refused";
  constructor(
    readonly code: RocketCode,
    message: string,
  ) {
    super(message);
  }
}

/** The status of a failure: a NimbusError by the table, anything else an internal error (logged, not told). */
export function statusOfError(err: unknown): WireStatus {
  if (err instanceof Refused) return status(err.code, err.message);
  if (err instanceof NimbusError) return status(ROCKET_CODE[err.code], err.message);
  console.error("nimbus grpc: unexpected error", err);
  return status("INTERNAL_SERVER_ERROR", "internal error");
}
