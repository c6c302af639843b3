/** @module The one parse of a decoded protobuf request: its schema's output, or BAD_REQUEST naming the fields. */
import type { z } from "zod";
import { Refused, type RocketCode } from "./codes.js";

/** `value` by `schema`, or a refusal naming every issue (at most a few, bounded by the status length). */
export function decodeRequest<T extends z.ZodType>(
  schema: T,
  value: unknown,
  code: RocketCode = "BAD_REQUEST",
): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.join(".") : "request"}: ${i.message}`);
  throw new Refused(code, issues.join("; "));
}
