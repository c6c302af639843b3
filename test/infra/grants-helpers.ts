/**
 * @module What the least-privilege check (grants.test.ts) records and sends: storage whose every call names the
 * table or bucket it reaches, and API Gateway events signed by the root user.
 */
import { signNimbusRequest } from "../../lib/core/request-signing.js";
import type { ApiEvent } from "../../lib/http/api-types.js";
import type { Storage } from "../../lib/storage/storage.js";
import { apiGatewayEvent } from "../support/api-gateway-event.js";

export const BUCKET = "bucket";
export const ROOT = { accessKey: "root", secretKey: "root-secret-1" };

/** `target` with every method call recorded in `touched` as `resource`. */
function recorded<T extends object>(target: T, resource: string, touched: Set<string>): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        touched.add(resource);
        return Reflect.apply(value, obj, args);
      };
    },
  });
}

export function recordingStorage(storage: Storage, touched: Set<string>): Storage {
  return {
    table: (spec) => recorded(storage.table(spec), spec.name, touched),
    objects: recorded(storage.objects, BUCKET, touched),
    counter: storage.counter,
    close: async () => {},
  };
}

/** A request as API Gateway hands it over, signed by the root user (functions without auth ignore it). */
export function apiEvent(method: string, url: string, body?: unknown): ApiEvent {
  const signature = signNimbusRequest({
    method,
    url: `https://api.test${url}`,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: ROOT,
  });
  return apiGatewayEvent(method, url, body, { headers: signature, userAgent: "grants-test" });
}
