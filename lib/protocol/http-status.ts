/** @module The HTTP status of each error code: the one table the server answers with and the SDK reads. */
import type { ErrorCode } from "../core/errors.js";

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  SYSTEM_ERROR: 500,
  SYSTEM_BUSY: 503,
  REQUEST_CODE_NOT_SUPPORTED: 404,
  MESSAGE_ILLEGAL: 400,
  PARAMETER_ILLEGAL: 400,
  UNAUTHENTICATED: 401,
  NO_PERMISSION: 403,
  TOPIC_NOT_EXIST: 404,
  TOPIC_EXIST_ALREADY: 409,
  SUBSCRIPTION_GROUP_NOT_EXIST: 404,
  QUERY_NOT_FOUND: 404,
  SERVICE_NOT_AVAILABLE: 503,
  MESSAGE_BODY_TOO_LARGE: 413,
  INVALID_RECEIPT_HANDLE: 400,
  CONDITION_FAILED: 409,
  ITEM_TOO_LARGE: 413,
  INVALID_RANGE: 416,
  OBJECT_NOT_FOUND: 404,
  DATA_CORRUPTED: 500,
  // HTTP's Misdirected Request: this server is not the one for that broker.
  WRONG_BROKER: 421,
};

/** A path that exists without the request's method: RocketMQ's REQUEST_CODE_NOT_SUPPORTED, as HTTP's 405. */
export const METHOD_NOT_ALLOWED = 405;
