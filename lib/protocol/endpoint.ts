/**
 * @module What an endpoint is: method, path, the zod schemas of its path parameters, query, body and
 * answer, the error codes it may answer, the service (Lambda function) that serves it and a one-line
 * summary. Handlers, the local server's router, infra/, the SDK and docs/openapi.json all read these.
 */
import { z } from "zod";
import type { Permission } from "../core/acl.js";
import type { ErrorCode } from "../core/errors.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/**
 * The services of the API, one Lambda function each on AWS (infra/manifest.ts) and one tag each in the
 * OpenAPI document.
 */
export const SERVICES = [
  "NameServer",
  "Topics",
  "Send",
  "Pull",
  "Offsets",
  "Groups",
  "Clients",
  "Transactions",
  "Acl",
  "Subscriptions",
] as const;
export type ServiceName = (typeof SERVICES)[number];

/** No path parameters, or no query: an empty object that refuses unknown keys. */
export const NO_PARAMS = z.object({}).strict();
/** No request body. */
export const NO_BODY = z.undefined();

/**
 * What a request of an endpoint needs under ACLs (docs/security.md): the permissions its decoded input asks
 * for (all of them), or `super` for what only a Super user may do (user and ACL administration).
 */
export type Access<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = "super" | AccessOf<P, Q, B>;

/** A method signature (bivariant), so that any endpoint's rule is an `AnyEndpoint`'s. */
type AccessOf<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = {
  rule(input: { params: z.output<P>; query: z.output<Q>; body: z.output<B> }): Permission[];
}["rule"];

export interface Endpoint<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  /** The OpenAPI operationId and the SDK's name for it. */
  readonly id: string;
  readonly method: HttpMethod;
  /** Path with `{name}` parameters, exactly as API Gateway route keys write them. */
  readonly path: `/${string}`;
  readonly service: ServiceName;
  readonly summary: string;
  /** `none`: open even on stages with auth (liveness probes cannot sign requests). */
  readonly auth: "required" | "none";
  /**
   * With `auth: "required"`, the resources and actions a request needs (ACL 2.0). An endpoint declared
   * without one is Super-user only (test/protocol/access.test.ts refuses that in the declarations).
   */
  readonly access?: Access<P, Q, B> | undefined;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly response: R;
  /** The codes it may answer besides SYSTEM_ERROR and SYSTEM_BUSY, which every endpoint may. */
  readonly errors: readonly ErrorCode[];
}

export type AnyEndpoint = Endpoint<z.ZodType, z.ZodType, z.ZodType, z.ZodType>;

/** An endpoint, with the defaults: no parameters, no query, no body, auth required. */
export function endpoint<
  P extends z.ZodType = typeof NO_PARAMS,
  Q extends z.ZodType = typeof NO_PARAMS,
  B extends z.ZodType = typeof NO_BODY,
  R extends z.ZodType = z.ZodType,
>(spec: {
  id: string;
  method: HttpMethod;
  path: `/${string}`;
  service: ServiceName;
  summary: string;
  auth?: "required" | "none";
  access?: Access<NoInfer<P>, NoInfer<Q>, NoInfer<B>>;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  errors: readonly ErrorCode[];
}): Endpoint<P, Q, B, R> {
  return {
    ...spec,
    auth: spec.auth ?? "required",
    params: (spec.params ?? NO_PARAMS) as P,
    query: (spec.query ?? NO_PARAMS) as Q,
    body: (spec.body ?? NO_BODY) as B,
  };
}

/** What the server hands an implementation: path parameters, query and body, decoded. */
export interface EndpointInput<E extends AnyEndpoint> {
  params: z.output<E["params"]>;
  query: z.output<E["query"]>;
  body: z.output<E["body"]>;
}

/** What an implementation answers (before encoding). */
export type EndpointOutput<E extends AnyEndpoint> = z.output<E["response"]>;

/** `"GET /topics/{topic}/route"`: the API Gateway route key. */
export const routeKey = (e: { method: string; path: string }): string => `${e.method} ${e.path}`;

/** The path parameter names of a path template, in order. */
export const pathParamNames = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "");
