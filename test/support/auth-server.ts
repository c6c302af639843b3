/**
 * @module A local server with auth on (`nimbus dev --auth`) for tests: a root Super user, a fresh master
 * key, no ACL cache (a change applies to the next request), background jobs that never fire during a test
 * (so a request's storage writes can be counted), and `call` to send a request signed by any user or unsigned.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type NimbusCredentials, signNimbusRequest } from "../../lib/core/request-signing.js";
import type { LocalServerOptions } from "../../lib/dev/local-server.js";
import { type QuietServer, startQuietServer } from "./quiet-server.js";
import type { ServerMode } from "./server-fixture.js";

export const ROOT: NimbusCredentials = { accessKey: "root", secretKey: "root-secret-123" };

export type AuthServer = QuietServer;

/** On the embedded store ("local") or on the AWS adapters over the emulators ("aws": dynalite + s3rver). */
export async function startAuthServer(
  mode: ServerMode = "local",
  extra: Partial<LocalServerOptions> = {},
): Promise<AuthServer> {
  return startQuietServer(mode, {
    auth: {
      root: { username: ROOT.accessKey, password: ROOT.secretKey },
      masterKey: new Uint8Array(randomBytes(32)),
      cacheMs: 0,
    },
    ...extra,
  });
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

/** Setup as root: creates the stored `user` and the `topics` (default queue numbers); a refusal fails the setup. */
export async function createUserAndTopics(baseUrl: string, user: NimbusCredentials, topics: string[]): Promise<void> {
  const created = await call(
    baseUrl,
    { method: "POST", path: "/acl/users", body: { username: user.accessKey, password: user.secretKey } },
    ROOT,
  );
  assert.equal(created.status, 200, JSON.stringify(created.body));
  for (const topic of topics)
    assert.equal((await call(baseUrl, { method: "PUT", path: `/topics/${topic}`, body: {} }, ROOT)).status, 200);
}
