/**
 * @module Turns routes into one API Gateway v2 handler: match the path, decode path parameters, query and
 * JSON body with the endpoint's schemas (the one parse at the edge), run the route, encode its answer with
 * the endpoint's response schema, and map a `NimbusError` to `{code, message}` with the status of
 * lib/protocol's table.
 */
import { z } from "zod";
import { ErrorCode, NimbusError } from "../core/errors.js";
import { HTTP_STATUS, METHOD_NOT_ALLOWED, pathParamNames } from "../protocol/index.js";
import type { ApiEvent, ApiResult } from "./api-types.js";
import { type RequestAuth, receivedRequest } from "./authorize.js";
import { parseJsonBody } from "./json-body.js";
import type { Route } from "./route.js";

const JSON_HEADERS = { "content-type": "application/json" };

export function json(statusCode: number, body: unknown): ApiResult {
  return { statusCode, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

export function errorResult(err: unknown): ApiResult {
  if (err instanceof NimbusError) return json(HTTP_STATUS[err.code], { code: err.code, message: err.message });
  console.error("unexpected error", err);
  return json(500, { code: ErrorCode.SYSTEM_ERROR, message: "internal error" });
}

export function describeZodError(err: z.ZodError, where = "body"): string {
  return err.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : where}: ${i.message}`).join("; ");
}

/** `value` decoded by `schema`, or PARAMETER_ILLEGAL naming every issue (`where` names the part of the request). */
export function decodeOrThrow<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, describeZodError(result.error, where));
  return result.data;
}

interface CompiledRoute<C> {
  route: Route<C>;
  pattern: RegExp;
  names: string[];
}

function compile<C>(route: Route<C>): CompiledRoute<C> {
  const source = route.endpoint.path.replace(/\{(\w+)\}/g, "([^/]+)");
  return { route, pattern: new RegExp(`^${source}$`), names: pathParamNames(route.endpoint.path) };
}

/**
 * One handler for `routes`; `context` is built once per process (per Lambda container) and reused. With
 * `auth` in the context, the signature is checked before the request is decoded and the ACL after.
 */
export function createApiHandler<C extends { auth?: RequestAuth | undefined }>(
  routes: Route<C>[],
  context: () => Promise<C>,
): (event: ApiEvent) => Promise<ApiResult> {
  const compiled = routes.map(compile);
  return async (event) => {
    try {
      const asked = event.requestContext.http.method.toUpperCase();
      // HEAD is GET without the body (HTTP's rule), so probes may use either.
      const method = asked === "HEAD" ? "GET" : asked;
      const path = event.rawPath;
      const candidates = compiled.map((c) => ({ c, m: c.pattern.exec(path) })).filter((x) => x.m !== null);
      if (candidates.length === 0)
        throw new NimbusError(ErrorCode.REQUEST_CODE_NOT_SUPPORTED, `no route for ${method} ${path}`);
      const hit = candidates.find((x) => x.c.route.endpoint.method === method);
      if (!hit?.m)
        return json(METHOD_NOT_ALLOWED, {
          code: ErrorCode.REQUEST_CODE_NOT_SUPPORTED,
          message: `${method} is not allowed on ${path}`,
        });
      const { endpoint } = hit.c.route;
      const ctx = await context();
      const gate = endpoint.auth === "required" ? ctx.auth : undefined;
      const user = gate && (await gate.authenticate(receivedRequest(event)));
      const rawParams: Record<string, string> = {};
      hit.c.names.forEach((name, i) => {
        rawParams[name] = decodePathSegment(hit.m?.[i + 1] ?? "");
      });
      const input = {
        params: decodeOrThrow(endpoint.params, rawParams, "path"),
        query: decodeOrThrow(endpoint.query, queryOf(event), "query"),
        body: decodeOrThrow(endpoint.body, bodyOf(event), "body"),
      };
      if (gate && user) await gate.authorize(user, endpoint, input);
      const answer = await hit.c.route.handle(input, ctx);
      const result = json(200, z.encode(endpoint.response, answer));
      return asked === "HEAD" ? { ...result, body: "" } : result;
    } catch (err) {
      return errorResult(err);
    }
  };
}

function queryOf(event: ApiEvent): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) {
    if (k === "__proto__")
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "a __proto__ query parameter is not allowed");
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function bodyOf(event: ApiEvent): unknown {
  if (event.body === undefined || event.body === "") return undefined;
  const text = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  return parseJsonBody(text);
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `malformed percent-encoding in the path: ${segment}`);
  }
}
