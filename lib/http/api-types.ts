/**
 * @module The HTTP shapes the handlers see: API Gateway HTTP API (payload v2) events and results. The
 * local server builds the same events, so one handler serves both.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";

export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;
export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** What a route handler gets: parsed path parameters, query string and JSON body (unchecked: routes parse with zod). */
export interface ApiRequest {
  method: HttpMethod;
  path: string;
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
}

/** A route: `"GET /topics/{topic}/route"` and what answers it (a JSON value, status 200). */
export interface Route<C> {
  method: HttpMethod;
  /** Path with `{name}` parameters, exactly as in API Gateway route keys. */
  path: string;
  handle(req: ApiRequest, ctx: C): Promise<unknown>;
}

export const routeKey = (r: { method: string; path: string }): string => `${r.method} ${r.path}`;
