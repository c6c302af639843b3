/** @module API Gateway HTTP API (payload 2.0) events as a Lambda function behind the stage's API receives them. */
import type { ApiEvent } from "../../lib/http/api-types.js";

/** `method url` with a JSON `body`, as API Gateway hands it over on host `host`; `headers` add to it (a signature). */
export function apiGatewayEvent(
  method: string,
  url: string,
  body?: unknown,
  options: { host?: string; headers?: Record<string, string>; userAgent?: string } = {},
): ApiEvent {
  const host = options.host ?? "api.test";
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const { pathname, searchParams } = new URL(url, `https://${host}`);
  const query = Object.fromEntries(searchParams);
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: pathname,
    rawQueryString: searchParams.toString(),
    headers: { "content-type": "application/json", host, ...options.headers },
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: "test",
      apiId: "test",
      domainName: host,
      domainPrefix: host.split(".")[0] ?? host,
      http: {
        method,
        path: pathname,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: options.userAgent ?? "nimbus-test",
      },
      requestId: `r-${now}-${Math.random().toString(36).slice(2, 8)}`,
      routeKey: "$default",
      stage: "$default",
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    ...(payload === undefined ? {} : { body: payload }),
    isBase64Encoded: false,
  };
}
