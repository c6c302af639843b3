/**
 * @module The one request path of every endpoint, below any transport: match the route, decode path
 * parameters, query and body with the endpoint's schemas (the one parse at the edge), run the route, encode
 * its answer (JSON, or a binary batch when the client asks and the endpoint has one: lib/protocol/binary-batch.ts),
 * and map a `NimbusError` to `{code, message}` with the status of lib/protocol's table.
 *
 * Lambda reaches it through an API Gateway event (handler.ts, `createApiHandler`); the local server
 * calls it straight from the Node request (lib/dev/local-server.ts), with no event to build. Both run this
 * same code from here on: routing, schemas, routes, encoding and errors.
 */
import type { z } from "zod";
import type { AclUser } from "../core/acl.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import {
  acceptsBatch,
  BATCH_MEDIA_TYPE,
  BINARY_BODIES,
  BINARY_RESPONSES,
  encodeToWire,
  HTTP_STATUS,
  isBatchMediaType,
  MAX_ISSUE_LENGTH,
  MAX_REPORTED_ISSUES,
  MAX_REQUEST_BYTES,
  METHOD_NOT_ALLOWED,
  pathParamNames,
} from "../protocol/index.js";
import type { ApiAnswer, ApiRequest } from "./api-types.js";
import { type RequestAuth, receivedRequest } from "./authorize.js";
import type { Suspend } from "./context.js";
import { checkJsonShape, parseJsonText } from "./json-body.js";
import type { LoadShedder } from "./load-shedder.js";
import { isReplayProof } from "./replay-guard.js";
import type { Route } from "./route.js";

export const JSON_TYPE = "application/json";

export function jsonAnswer(status: number, body: unknown): ApiAnswer {
  return { status, contentType: JSON_TYPE, body: JSON.stringify(body) };
}

/** The SYSTEM_BUSY answer of a request refused on arrival (`message` from LoadShedder.arrivalRefusal): no error object. */
export function busyAnswer(message: string): ApiAnswer {
  return jsonAnswer(HTTP_STATUS[ErrorCode.SYSTEM_BUSY], { code: ErrorCode.SYSTEM_BUSY, message });
}

export function errorAnswer(err: unknown): ApiAnswer {
  if (err instanceof NimbusError) return jsonAnswer(HTTP_STATUS[err.code], { code: err.code, message: err.message });
  console.error("unexpected error", err);
  return jsonAnswer(500, { code: ErrorCode.SYSTEM_ERROR, message: "internal error" });
}

/**
 * The first MAX_REPORTED_ISSUES issues, each cut to MAX_ISSUE_LENGTH characters, and how many more there were:
 * an error answer stays a few hundred bytes whatever the request held.
 */
export function describeZodError(err: z.ZodError, where = "body"): string {
  const shown = err.issues.slice(0, MAX_REPORTED_ISSUES).map((i) => {
    const text = `${i.path.length > 0 ? i.path.slice(0, 8).join(".") : where}: ${i.message}`;
    return text.length > MAX_ISSUE_LENGTH ? `${text.slice(0, MAX_ISSUE_LENGTH)}...` : text;
  });
  const more = err.issues.length - shown.length;
  return more > 0 ? `${shown.join("; ")}; and ${more} more issue${more === 1 ? "" : "s"}` : shown.join("; ");
}

/** `value` decoded by `schema`, or PARAMETER_ILLEGAL naming its first issues (`where` names the part of the request). */
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

export type RequestHandler = (req: ApiRequest) => Promise<ApiAnswer>;

/**
 * One handler for `routes`; `context` is built once per process (per Lambda container) and reused. With
 * `auth` in the context, the signature is checked before the request is decoded and the ACL after
 * (lib/http/authorize.ts): a refused request never reaches its route.
 */
export function createRequestHandler<
  C extends { auth?: RequestAuth | undefined; caller?: AclUser | undefined; suspend?: Suspend | undefined },
>(routes: Route<C>[], context: () => Promise<C>, options: { shedder?: LoadShedder | undefined } = {}): RequestHandler {
  const compiled = routes.map(compile);
  return async (req) => {
    let release: (() => void) | undefined;
    try {
      const asked = req.method.toUpperCase();
      // HEAD is GET without the body (HTTP's rule), so probes may use either.
      const method = asked === "HEAD" ? "GET" : asked;
      const { path } = req;
      let hit: { c: CompiledRoute<C>; m: RegExpExecArray } | undefined;
      let pathKnown = false;
      for (const c of compiled) {
        const m = c.pattern.exec(path);
        if (m === null) continue;
        pathKnown = true;
        if (c.route.endpoint.method === method) {
          hit = { c, m };
          break;
        }
      }
      if (!pathKnown) throw new NimbusError(ErrorCode.REQUEST_CODE_NOT_SUPPORTED, `no route for ${method} ${path}`);
      if (!hit)
        return jsonAnswer(METHOD_NOT_ALLOWED, {
          code: ErrorCode.REQUEST_CODE_NOT_SUPPORTED,
          message: `${method} is not allowed on ${path}`,
        });
      const { endpoint } = hit.c.route;
      // Writes and pulls wait their turn, and are refused (SYSTEM_BUSY, before anything runs) past the bound;
      // reads (health, admin) never wait here.
      if (method !== "GET" && options.shedder) release = await options.shedder.enter(req.receivedAt);
      const ctx = await context();
      const gate = endpoint.auth === "required" ? ctx.auth : undefined;
      const user = gate && (await gate.authenticate(receivedRequest(req), req.signedHeadersChecked === true));
      refuseProtoKeys(req.query);
      const rawParams: Record<string, string> = {};
      hit.c.names.forEach((name, i) => {
        rawParams[name] = decodePathSegment(hit.m[i + 1] ?? "");
      });
      const params = decodeOrThrow(endpoint.params, rawParams, "path");
      const query = decodeOrThrow(endpoint.query, req.query, "query");
      const json = readBody(endpoint.id, req);
      // Who may not call the endpoint at all, or not on the resources the raw body names, is refused before the
      // body is decoded: a refused caller never costs a decode (the full check runs again on the decoded input).
      if (gate && user) await gate.preauthorize(user, endpoint, { params, query, body: json.raw });
      const input = { params, query, body: json.decode(endpoint.body) };
      if (gate && user) {
        await gate.authorize(user, endpoint, input);
        if (isReplayProof(endpoint)) await gate.admitEverywhere(receivedRequest(req), user);
      }
      // The route sees who signed, for the checks it decides on stored state (PUT /topics: Create or Update), and
      // may wait for an event without holding its slot (a long-polled receive).
      const shedder = options.shedder;
      const suspend: Suspend = async (wait) => {
        if (shedder === undefined || release === undefined) return wait();
        const held = release;
        release = undefined;
        const parked = await shedder.parkWhile(held, wait);
        release = parked.release;
        return parked.value;
      };
      const answer = await hit.c.route.handle(input, { ...ctx, ...(user ? { caller: user } : {}), suspend });
      if (asked === "HEAD") return { status: 200, contentType: JSON_TYPE, body: "" };
      const binary = BINARY_RESPONSES[endpoint.id];
      if (binary && acceptsBatch(req.header("accept"))) {
        return { status: 200, contentType: BATCH_MEDIA_TYPE, body: binary(answer as never) };
      }
      return jsonAnswer(200, encodeToWire(endpoint.response, answer as never));
    } catch (err) {
      return errorAnswer(err);
    } finally {
      release?.();
    }
  };
}

/** A body read but not yet decoded: its parsed JSON (undefined for a binary batch) and how to decode it. */
interface ReadBody {
  raw: unknown;
  decode(schema: z.ZodType): unknown;
}

/**
 * The body, sized and parsed but not decoded: a binary batch for an endpoint that takes one, else JSON
 * (shape-checked) for the endpoint's schema. Over MAX_REQUEST_BYTES is refused before anything is parsed.
 */
function readBody(endpointId: string, req: ApiRequest): ReadBody {
  const body = req.body;
  if (body !== undefined && body.byteLength > MAX_REQUEST_BYTES)
    throw new NimbusError(
      ErrorCode.MESSAGE_BODY_TOO_LARGE,
      `the request body is ${body.byteLength} bytes, over the limit of ${MAX_REQUEST_BYTES}`,
    );
  const binary = BINARY_BODIES[endpointId];
  if (isBatchMediaType(req.header("content-type"))) {
    if (!binary) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `this endpoint takes no ${BATCH_MEDIA_TYPE} body`);
    return { raw: undefined, decode: () => binary(body ?? new Uint8Array(0)) };
  }
  const raw = jsonOf(body);
  return {
    raw,
    decode: (schema) => {
      checkJsonShape(raw);
      return decodeOrThrow(schema, raw, "body");
    },
  };
}

function jsonOf(body: Uint8Array | undefined): unknown {
  if (body === undefined || body.byteLength === 0) return undefined;
  return parseJsonText(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
}

/** No prototype games: a `__proto__` query parameter is refused, not dropped. */
function refuseProtoKeys(query: Record<string, string>): void {
  if (Object.hasOwn(query, "__proto__"))
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "a __proto__ query parameter is not allowed");
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `malformed percent-encoding in the path: ${segment}`);
  }
}
