/**
 * @module The one error type of Nimbus. Every failure that crosses a layer is a `NimbusError` with a
 * `code`; names follow RocketMQ's `ResponseCode` where one exists. The HTTP status of each code is
 * lib/protocol's concern (`HTTP_STATUS` in lib/protocol/http-status.ts).
 */

/** Error codes. RocketMQ `ResponseCode` names first, then Nimbus' own (storage and data integrity). */
export const ErrorCode = {
  // RocketMQ ResponseCode names
  SYSTEM_ERROR: "SYSTEM_ERROR",
  SYSTEM_BUSY: "SYSTEM_BUSY",
  REQUEST_CODE_NOT_SUPPORTED: "REQUEST_CODE_NOT_SUPPORTED",
  MESSAGE_ILLEGAL: "MESSAGE_ILLEGAL",
  PARAMETER_ILLEGAL: "PARAMETER_ILLEGAL",
  NO_PERMISSION: "NO_PERMISSION",
  TOPIC_NOT_EXIST: "TOPIC_NOT_EXIST",
  TOPIC_EXIST_ALREADY: "TOPIC_EXIST_ALREADY",
  SUBSCRIPTION_GROUP_NOT_EXIST: "SUBSCRIPTION_GROUP_NOT_EXIST",
  QUERY_NOT_FOUND: "QUERY_NOT_FOUND",
  SERVICE_NOT_AVAILABLE: "SERVICE_NOT_AVAILABLE",
  // RocketMQ 5 (apache/rocketmq-apis Code) names
  /** A message body (or a batch) over the size limit. */
  MESSAGE_BODY_TOO_LARGE: "MESSAGE_BODY_TOO_LARGE",
  /** A POP receipt handle that is forged, stale (redelivered or changed since), expired or already acked. */
  INVALID_RECEIPT_HANDLE: "INVALID_RECEIPT_HANDLE",
  // RocketMQ 5 (apache/rocketmq-apis Code UNAUTHORIZED): no valid signature; NO_PERMISSION is a known caller refused.
  /** A request without a valid signature: missing, malformed, tampered, expired, replayed, or an unknown key. */
  UNAUTHENTICATED: "UNAUTHENTICATED",
  // Nimbus: storage ports
  /** A conditional write found the item in another state than the condition asked for. */
  CONDITION_FAILED: "CONDITION_FAILED",
  /** An item or request exceeds a storage limit (DynamoDB's 400 KB item, a batch, a body). */
  ITEM_TOO_LARGE: "ITEM_TOO_LARGE",
  /** A ranged read asked for bytes that the object does not have. */
  INVALID_RANGE: "INVALID_RANGE",
  /** An object key that the store does not hold. */
  OBJECT_NOT_FOUND: "OBJECT_NOT_FOUND",
  /** Stored or received bytes failed a check (magic, version, length, CRC32C). */
  DATA_CORRUPTED: "DATA_CORRUPTED",
  /** A request for a broker that this process does not serve; the message names the address that does. */
  WRONG_BROKER: "WRONG_BROKER",
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Codes a caller may retry as they are (the request was not applied). */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set([ErrorCode.SYSTEM_BUSY, ErrorCode.SERVICE_NOT_AVAILABLE]);

export class NimbusError extends Error {
  override readonly name = "NimbusError";
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

/**
 * How a SYSTEM_BUSY message starts when the request was refused before anything of it ran (the load shedder,
 * a gateway's throttling): RocketMQ's flow-control marker. Such a request is safe to send again as it was.
 */
export const SHED_MARK = "[TIMEOUT_CLEAN_QUEUE]";

/** True for a SYSTEM_BUSY refusal made before anything of the request ran (its message starts with SHED_MARK). */
export function isShedAnswer(err: unknown): boolean {
  return isNimbusError(err, ErrorCode.SYSTEM_BUSY) && err.message.startsWith(SHED_MARK);
}

/** True when `err` is a NimbusError, optionally with the given code. */
export function isNimbusError(err: unknown, code?: ErrorCode): err is NimbusError {
  return err instanceof NimbusError && (code === undefined || err.code === code);
}
