/**
 * @module Turns a list of routes into one API Gateway v2 handler: match the path, parse JSON, run the
 * route, map a `NimbusError` to `{code, message}` with its status from the one table in errors.ts.
 */
import { z } from "zod";
import { ErrorCode, HTTP_STATUS, NimbusError } from "../core/errors.js";
import type { ApiEvent, ApiRequest, ApiResult, HttpMethod, Route } from "./api-types.js";

const JSON_HEADERS = { "content-type": "application/json" };

export function json(statusCode: number, body: unknown): ApiResult {
  return { statusCode, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

export function errorResult(err: unknown): ApiResult {
  if (err instanceof NimbusError) return json(HTTP_STATUS[err.code], { code: err.code, message: err.message });
  if (err instanceof z.ZodError)
    return json(400, { code: ErrorCode.PARAMETER_ILLEGAL, message: describeZodError(err) });
  console.error("unexpected error", err);
  return json(500, { code: ErrorCode.SYSTEM_ERROR, message: "internal error" });
}

export function describeZodError(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "body"}: ${i.message}`).join("; ");
}

interface CompiledRoute<C> {
  route: Route<C>;
  pattern: RegExp;
  names: string[];
}

function compile<C>(route: Route<C>): CompiledRoute<C> {
  const names: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return "([^/]+)";
  });
  return { route, pattern: new RegExp(`^${source}$`), names };
}

/** One handler for `routes`; `context` is built once per process (per Lambda container) and reused. */
export function createApiHandler<C>(
  routes: Route<C>[],
  context: () => Promise<C>,
): (event: ApiEvent) => Promise<ApiResult> {
  const compiled = routes.map(compile);
  return async (event) => {
    try {
      const method = event.requestContext.http.method.toUpperCase() as HttpMethod;
      const path = event.rawPath;
      const candidates = compiled.map((c) => ({ c, m: c.pattern.exec(path) })).filter((x) => x.m !== null);
      if (candidates.length === 0)
        throw new NimbusError(ErrorCode.REQUEST_CODE_NOT_SUPPORTED, `no route for ${method} ${path}`);
      const hit = candidates.find((x) => x.c.route.method === method);
      if (!hit?.m)
        return json(405, {
          code: ErrorCode.REQUEST_CODE_NOT_SUPPORTED,
          message: `${method} is not allowed on ${path}`,
        });
      const params: Record<string, string> = {};
      hit.c.names.forEach((name, i) => {
        params[name] = decodePathSegment(hit.m?.[i + 1] ?? "");
      });
      const req: ApiRequest = { method, path, params, query: queryOf(event), body: bodyOf(event) };
      return json(200, await hit.c.route.handle(req, await context()));
    } catch (err) {
      return errorResult(err);
    }
  };
}

function queryOf(event: ApiEvent): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

function bodyOf(event: ApiEvent): unknown {
  if (event.body === undefined || event.body === "") return undefined;
  const text = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  try {
    return JSON.parse(text);
  } catch {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "the request body is not valid JSON");
  }
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `malformed percent-encoding in the path: ${segment}`);
  }
}
