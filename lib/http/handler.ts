/**
 * @module The Lambda edge of the request path: an API Gateway v2 event becomes an `ApiRequest` for the
 * one handler of request-handler.ts, and its answer an API Gateway result (a binary batch base64-encoded,
 * as API Gateway expects). The local server skips the event and calls the same handler directly.
 */
import type { ApiAnswer, ApiEvent, ApiRequest, ApiResult } from "./api-types.js";
import type { RequestAuth } from "./authorize.js";
import { LoadShedder, type LoadSheddingOptions } from "./load-shedder.js";
import { createRequestHandler, errorAnswer, jsonAnswer } from "./request-handler.js";
import type { Route } from "./route.js";

export function toApiResult(answer: ApiAnswer): ApiResult {
  const headers = { "content-type": answer.contentType };
  if (typeof answer.body === "string") return { statusCode: answer.status, headers, body: answer.body };
  const bytes = answer.body;
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  return { statusCode: answer.status, headers, body, isBase64Encoded: true };
}

export function json(statusCode: number, body: unknown): ApiResult {
  return toApiResult(jsonAnswer(statusCode, body));
}

export function errorResult(err: unknown): ApiResult {
  return toApiResult(errorAnswer(err));
}

/** The request an API Gateway (payload 2.0) event carries. */
export function fromApiEvent(event: ApiEvent): ApiRequest {
  // No prototype: a `__proto__` parameter stays a key, for the request handler to refuse.
  const query = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) if (v !== undefined) query[k] = v;
  const headers = event.headers ?? {};
  const body =
    event.body === undefined || event.body === ""
      ? undefined
      : event.isBase64Encoded
        ? new Uint8Array(Buffer.from(event.body, "base64"))
        : new TextEncoder().encode(event.body);
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    query,
    rawQuery: event.rawQueryString,
    header: (name) => headers[name] ?? headers[name.toLowerCase()],
    body,
  };
}

/** One Lambda handler for `routes`; `context` is built once per process (per Lambda container) and reused. */
export function createApiHandler<C extends { auth?: RequestAuth | undefined }>(
  routes: Route<C>[],
  context: () => Promise<C>,
  loadShedding: LoadSheddingOptions = {},
): (event: ApiEvent) => Promise<ApiResult> {
  // One request at a time per container is Lambda's own model; the bound still holds any burst a container
  // is given (and the same code path as the local server's).
  const shedder = new LoadShedder(loadShedding);
  const handle = createRequestHandler(routes, context, { shedder });
  return async (event) => {
    try {
      return toApiResult(await handle(fromApiEvent(event)));
    } catch (err) {
      return errorResult(err);
    }
  };
}
