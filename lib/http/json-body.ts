/**
 * @module A request's JSON body, parsed without prototype games: a `__proto__` key anywhere is refused
 * (PARAMETER_ILLEGAL), not silently dropped by the decoders or, worse, turned into an object's prototype.
 */
import { ErrorCode, NimbusError } from "../core/errors.js";

const PROTO = "__proto__";

/** `text` parsed as JSON, or PARAMETER_ILLEGAL for bad JSON or a `__proto__` key. */
export function parseJsonBody(text: string): unknown {
  // The reviver sees every key; only bodies that could spell the key (plainly or with \u escapes) pay for it.
  const suspicious = text.includes(PROTO) || text.includes("\\u");
  try {
    return suspicious
      ? JSON.parse(text, (key, value: unknown) => {
          if (key === PROTO) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "a __proto__ key is not allowed");
          return value;
        })
      : JSON.parse(text);
  } catch (err) {
    if (err instanceof NimbusError) throw err;
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "the request body is not valid JSON");
  }
}
