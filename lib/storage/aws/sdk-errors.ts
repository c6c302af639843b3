/**
 * @module The one place where AWS SDK errors become `NimbusError`s. DynamoDB and S3 name their errors
 * (`name` on the SDK's exception) and give an HTTP status; network failures arrive as Node errors with a
 * `code`. Everything the adapters throw goes through `translateError`, so callers only ever see our codes.
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { ConditionFailedError } from "../table.js";

/** Errors that mean "too much load now, the request was not applied": retry later (SYSTEM_BUSY). */
const BUSY_NAMES: ReadonlySet<string> = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "Throttling",
  "RequestLimitExceeded",
  "SlowDown",
  "ServiceUnavailable",
  "ServiceUnavailableException",
  "TooManyRequestsException",
  "RequestThrottled",
]);

/** Node socket/DNS errors and SDK timeouts: the service could not be reached (SYSTEM_BUSY). */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
]);

/** The fields of an SDK (or Node) error that we look at. */
interface SdkErrorFields {
  name: string;
  message: string;
  code: string | undefined;
  status: number | undefined;
  item: Record<string, AttributeValue> | undefined;
}

function fieldsOf(err: unknown): SdkErrorFields {
  const e = (typeof err === "object" && err !== null ? err : {}) as {
    name?: unknown;
    message?: unknown;
    code?: unknown;
    Item?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  const status = e.$metadata?.httpStatusCode;
  return {
    name: typeof e.name === "string" ? e.name : "Error",
    message: typeof e.message === "string" ? e.message : String(err),
    code: typeof e.code === "string" ? e.code : undefined,
    status: typeof status === "number" ? status : undefined,
    item: typeof e.Item === "object" && e.Item !== null ? (e.Item as Record<string, AttributeValue>) : undefined,
  };
}

/** True for DynamoDB's failed `ConditionExpression`. */
export function isConditionalCheckFailed(err: unknown): boolean {
  return fieldsOf(err).name === "ConditionalCheckFailedException";
}

/** The old item DynamoDB returned with a failed condition (`ReturnValuesOnConditionCheckFailure: ALL_OLD`). */
export function conditionFailedItem(err: unknown): Record<string, AttributeValue> | undefined {
  return fieldsOf(err).item;
}

/**
 * Translates any error from a DynamoDB or S3 call into a `NimbusError`. `what` names the call and its
 * target (e.g. `PutItem on table "nimbus-routes"`), so a missing table or bucket says which.
 */
export function translateError(err: unknown, what: string): NimbusError {
  if (err instanceof NimbusError) return err;
  const { name, message, code, status } = fieldsOf(err);
  const detail = `${what}: ${name}: ${message}`;
  const cause = { cause: err };
  if (name === "ConditionalCheckFailedException")
    return new ConditionFailedError(`${what}: condition failed`, undefined, cause);
  if (BUSY_NAMES.has(name) || status === 503 || status === 429) {
    return new NimbusError(ErrorCode.SYSTEM_BUSY, detail, cause);
  }
  if (status === undefined && (NETWORK_CODES.has(name) || (code !== undefined && NETWORK_CODES.has(code)))) {
    return new NimbusError(ErrorCode.SYSTEM_BUSY, detail, cause);
  }
  if (name === "ValidationException") {
    // DynamoDB reports an oversized item as a validation error; we give it its own code.
    const tooLarge = /item size/i.test(message) && /exceed/i.test(message);
    return new NimbusError(tooLarge ? ErrorCode.ITEM_TOO_LARGE : ErrorCode.PARAMETER_ILLEGAL, detail, cause);
  }
  if (name === "ResourceNotFoundException") {
    return new NimbusError(ErrorCode.SYSTEM_ERROR, `${what}: the table does not exist (${message})`, cause);
  }
  if (name === "NoSuchBucket") {
    return new NimbusError(ErrorCode.SYSTEM_ERROR, `${what}: the bucket does not exist`, cause);
  }
  if (name === "NoSuchKey" || name === "NotFound" || status === 404) {
    return new NimbusError(ErrorCode.OBJECT_NOT_FOUND, `${what}: no such object`, cause);
  }
  if (name === "InvalidRange" || status === 416) {
    return new NimbusError(ErrorCode.INVALID_RANGE, `${what}: the range is not satisfiable`, cause);
  }
  return new NimbusError(ErrorCode.SYSTEM_ERROR, detail, cause);
}
