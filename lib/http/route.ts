/**
 * @module Routes: an endpoint of lib/protocol and the code that answers it. An implementation gets its
 * input decoded by the endpoint's schemas and answers the endpoint's response type; `serviceRoutes` holds
 * a service to exactly its endpoints, so a declared endpoint cannot go unserved, nor an undeclared one be served.
 */
import {
  type AnyEndpoint,
  ENDPOINTS,
  type EndpointInput,
  type EndpointOutput,
  routeKey,
  type ServiceName,
} from "../protocol/index.js";

export interface Route<C> {
  readonly endpoint: AnyEndpoint;
  handle(input: EndpointInput<AnyEndpoint>, ctx: C): Promise<unknown>;
}

/** A route for `endpoint`, typed by its schemas. */
export function route<E extends AnyEndpoint, C>(
  endpoint: E,
  handle: (input: EndpointInput<E>, ctx: C) => Promise<EndpointOutput<E>>,
): Route<C> {
  return { endpoint, handle: handle as Route<C>["handle"] };
}

/** The routes of one service; throws unless they serve exactly the service's endpoints, each once. */
export function serviceRoutes<C>(service: ServiceName, routes: Route<C>[]): Route<C>[] {
  const served = routes.map((r) => routeKey(r.endpoint));
  const declared = ENDPOINTS.filter((e) => e.service === service).map(routeKey);
  const foreign = routes
    .filter((r) => r.endpoint.service !== service || !ENDPOINTS.includes(r.endpoint))
    .map((r) => routeKey(r.endpoint));
  const missing = declared.filter((k) => !served.includes(k));
  if (foreign.length > 0 || missing.length > 0 || new Set(served).size !== served.length) {
    throw new Error(
      `service ${service}: routes must serve exactly its endpoints once (missing: ${missing.join(", ") || "none"}; ` +
        `undeclared or another service's: ${foreign.join(", ") || "none"}; served: ${served.join(", ")})`,
    );
  }
  return routes;
}
