/**
 * @module A local server with auth on (`nimbus dev --auth`) for tests: a root Super user, a fresh master
 * key, no ACL cache (a change applies to the next request), background jobs that never fire during a test
 * (so a request's storage writes can be counted), and `call` to send a request signed by any user or unsigned.
 */
import { randomBytes } from "node:crypto";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { type NimbusCredentials, signNimbusRequest } from "../../lib/core/request-signing.js";
import { type LocalServer, type LocalServerOptions, startLocalServer } from "../../lib/dev/local-server.js";
import { openBacking, type ServerMode } from "./server-fixture.js";

export const ROOT: NimbusCredentials = { accessKey: "root", secretKey: "root-secret-123" };

export interface AuthServer {
  server: LocalServer;
  close(): Promise<void>;
}

/** On the embedded store ("local") or on the AWS adapters over the emulators ("aws": dynalite + s3rver). */
export async function startAuthServer(
  mode: ServerMode = "local",
  extra: Partial<LocalServerOptions> = {},
): Promise<AuthServer> {
  const backing = await openBacking(mode);
  const server = await startLocalServer({
    port: 0,
    storage: backing.choice,
    config: parseNimbusConfig({ transactionCheckIntervalMs: 3_600_000 }),
    registerIntervalMs: 3_600_000,
    retentionIntervalMs: 3_600_000,
    auth: {
      root: { username: ROOT.accessKey, password: ROOT.secretKey },
      masterKey: new Uint8Array(randomBytes(32)),
      cacheMs: 0,
    },
    ...extra,
  });
  return {
    server,
    close: async () => {
      try {
        await server.close();
      } finally {
        await backing.release();
      }
    },
  };
}

export interface Call {
  method: string;
  path: string;
  body?: unknown;
}

export interface CallAnswer {
  status: number;
  body: { code?: string; message?: string } & Record<string, unknown>;
}

/** The signed headers of `call` (unsigned without `credentials`), to send or to tamper with. */
export function signedHeaders(baseUrl: string, call: Call, credentials?: NimbusCredentials): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
  if (!credentials) return headers;
  return {
    ...headers,
    ...signNimbusRequest({ method: call.method, url: baseUrl + call.path, headers, body: payload, credentials }),
  };
}

/** Sends `call`, signed by `credentials` (unsigned without), with `headers` as given when set. */
export async function call(
  baseUrl: string,
  request: Call,
  credentials?: NimbusCredentials,
  headers = signedHeaders(baseUrl, request, credentials),
): Promise<CallAnswer> {
  const res = await fetch(baseUrl + request.path, {
    method: request.method,
    headers,
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as CallAnswer["body"]) };
}
