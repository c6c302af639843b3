/**
 * @module Node HTTP requests for the handlers: the error of a body past its limit, the request as the one
 * request path takes it (`toApiRequest`: what the local server serves), an answer written back, and the
 * API Gateway HTTP API (payload 2.0) event that Lambda would receive for the same request (`toApiEvent`,
 * for tests that drive the Lambda edge).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiAnswer, ApiEvent, ApiRequest } from "../http/api-types.js";

/** A request body past MAX_REQUEST_BYTES (request-body.ts): answered 413. */
export class BodyTooLargeError extends Error {}

export function toApiEvent(req: IncomingMessage, body: Buffer, now = Date.now()): ApiEvent {
  const url = new URL(req.url ?? "/", "http://localhost");
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(",") : v;
  // No prototype: a `__proto__` parameter stays a key, for the handler to refuse, instead of vanishing.
  const query = Object.create(null) as Record<string, string>;
  for (const [k, v] of url.searchParams) query[k] = query[k] === undefined ? v : `${query[k]},${v}`;
  const method = (req.method ?? "GET").toUpperCase();
  const textual = /json|text/.test(headers["content-type"] ?? "application/json");
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: "local",
      apiId: "local",
      domainName: headers.host ?? "127.0.0.1",
      domainPrefix: "local",
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? "",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    ...(body.byteLength > 0 ? { body: textual ? body.toString("utf8") : body.toString("base64") } : {}),
    isBase64Encoded: body.byteLength > 0 && !textual,
  };
}

/** The request as the one request path takes it, straight from Node's (no event built). */
export function toApiRequest(req: IncomingMessage, body: Buffer): ApiRequest {
  const raw = req.url ?? "/";
  const q = raw.indexOf("?");
  // No prototype: a `__proto__` parameter stays a key, for the request handler to refuse, instead of vanishing.
  const query = Object.create(null) as Record<string, string>;
  if (q >= 0) {
    for (const [k, v] of new URLSearchParams(raw.slice(q + 1)))
      query[k] = query[k] === undefined ? v : `${query[k]},${v}`;
  }
  const headers = req.headers;
  return {
    method: req.method ?? "GET",
    path: q >= 0 ? raw.slice(0, q) : raw,
    query,
    rawQuery: q >= 0 ? raw.slice(q + 1) : "",
    header: (name) => {
      const v = headers[name];
      return Array.isArray(v) ? v.join(",") : v;
    },
    body: body.byteLength > 0 ? body : undefined,
  };
}

/**
 * An answer with its length up front, as API Gateway sends one (`writeHead` alone would frame the body in chunks):
 * a client reads one body of known size, not a chunked body and its closing chunk. `length`: the body's bytes, when
 * the caller has counted them already.
 */
export function writeAnswer(res: ServerResponse, answer: ApiAnswer, length = Buffer.byteLength(answer.body)): void {
  res.writeHead(answer.status, { "content-type": answer.contentType, "content-length": length });
  res.end(answer.body);
}
