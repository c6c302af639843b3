/** @module A request decoded with the HTTP contract's schema (lib/protocol), refused as MESSAGE_ILLEGAL when it does not fit. */
import type { z } from "zod";
import { badHeader } from "./codes.js";

export function decodeWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? ` (${issue.path.join(".")})` : "";
  throw badHeader(`${what}: ${issue?.message ?? "invalid"}${where}`.slice(0, 512));
}
