/**
 * @module One endpoint of lib/protocol as a call: the input encoded to its wire form by the endpoint's schemas
 * (a value they refuse is the server's PARAMETER_ILLEGAL, found before sending) and the answer checked and decoded.
 */
import type { z } from "zod";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { type AnyEndpoint, type EndpointInput, type EndpointOutput, safeEncodeToWire } from "../../protocol/index.js";

/** What a call gives: the parts of the endpoint's input that it has. */
export type CallInput<E extends AnyEndpoint> = Partial<EndpointInput<E>>;

/** `value` encoded to its wire form by `schema`; a value the schema refuses is the server's PARAMETER_ILLEGAL, found early. */
export function encode(schema: z.ZodType, value: unknown, where: string): unknown {
  const result = safeEncodeToWire(schema, value as never);
  if (result.success) return result.data;
  const detail = result.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : where}: ${i.message}`);
  throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, detail.join("; "));
}

/** An answer checked and decoded by the endpoint's response schema. */
export function checkedAnswer<E extends AnyEndpoint>(endpoint: E, answer: unknown): EndpointOutput<E> {
  const decoded = endpoint.response.safeParse(answer);
  if (!decoded.success) {
    throw new NimbusError(
      ErrorCode.SYSTEM_ERROR,
      `${endpoint.method} ${endpoint.path}: the answer does not match the protocol: ${decoded.error.message}`,
    );
  }
  return decoded.data as EndpointOutput<E>;
}
