/**
 * @module Zod schemas shared by the handlers: names, path parameters, base64 bodies. Each schema checks
 * shape only; business rules (name patterns, perms, limits) are the broker's, so they hold without HTTP too.
 */
import { z } from "zod";
import { ErrorCode, NimbusError } from "../../lib/core/errors.js";
import { describeZodError } from "../../lib/http/handler.js";

export const name = z.string().min(1).max(255);
export const nonNegativeInt = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const queueId = z.number().int().min(0).max(0x7fffffff);

/**
 * Strict standard base64 (RFC 4648), padded: what decodes must encode back to the same text. A round trip
 * is stricter than a regex and cheaper (a regex with a repeated group also overflows the stack on
 * multi-megabyte bodies).
 */
export const base64 = z.string().transform((s, ctx) => {
  const bytes = Buffer.from(s, "base64");
  if (bytes.toString("base64") !== s) {
    ctx.addIssue({ code: "custom", message: "must be base64" });
    return z.NEVER;
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
});

export const topicParams = z.object({ topic: name });

/** Parses `value` with `schema`, answering PARAMETER_ILLEGAL with every issue on failure. */
export function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, describeZodError(result.error));
  return result.data;
}
