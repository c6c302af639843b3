/**
 * @module The queue log's binary batch format's constants and its DATA_CORRUPTED error, shared by its encoder
 * (message-codec.ts, where the format is laid out) and its decoder (message-decode.ts).
 */
import { ErrorCode, NimbusError } from "./errors.js";

export const BATCH_MAGIC = [0x4e, 0x4d, 0x42, 0x54] as const; // "NMBT"
export const BATCH_VERSION = 1;
export const BATCH_HEADER_SIZE = 9;
/** A record with no tags, keys, properties or body. */
export const RECORD_OVERHEAD = 34;
/** 2^32: an i64 is its high i32 times this plus its low u32. */
export const TWO_32 = 0x1_0000_0000;

/** DATA_CORRUPTED, saying what and where. */
export function corrupted(message: string): NimbusError {
  return new NimbusError(ErrorCode.DATA_CORRUPTED, message);
}
