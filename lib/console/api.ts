/**
 * @module The console's API client: one typed call per endpoint of lib/protocol (its path, method and
 * schemas' wire types), over `fetch`, signed by the connection's `RequestSigner`. A failure is an
 * `ApiError` carrying the API's own `{code, message}`.
 */
import type { z } from "zod";
import { type EndpointId, endpoints } from "../protocol/index.js";
import type { RequestSigner } from "./signing.js";

type Ep<K extends EndpointId> = (typeof endpoints)[K];
/** What goes on the wire (before the server's decoding): bodies as base64 text, keys as given. */
export type WireIn<S extends z.ZodType> = z.input<S>;
/** What comes back on the wire (the server's encoded answer). */
export type Answer<K extends EndpointId> = z.input<Ep<K>["response"]>;

export interface CallInput<K extends EndpointId> {
  params?: WireIn<Ep<K>["params"]>;
  query?: WireIn<Ep<K>["query"]>;
  body?: WireIn<Ep<K>["body"]>;
}

export interface Connection {
  /** The API's base URL, no trailing slash. */
  apiUrl: string;
  sign: RequestSigner;
}

/** An answer other than 2xx: the API's code and message (or what went wrong reaching it). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Calls endpoint `id` and answers its decoded JSON, or throws an `ApiError`. */
export async function call<K extends EndpointId>(
  conn: Connection,
  id: K,
  input: CallInput<K> = {},
): Promise<Answer<K>> {
  const endpoint = endpoints[id];
  const params = (input.params ?? {}) as Record<string, string>;
  const path = endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ""));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
    if (value !== undefined) query.set(name, String(value));
  }
  const url = `${conn.apiUrl}${path}${query.size > 0 ? `?${query}` : ""}`;
  const body = input.body === undefined ? undefined : JSON.stringify(input.body);
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  let response: Response;
  try {
    const signature = await conn.sign({ method: endpoint.method, url, headers, body });
    response = await fetch(url, { method: endpoint.method, headers: { ...headers, ...signature }, body: body ?? null });
  } catch (err) {
    throw new ApiError(0, "NETWORK", `${endpoint.method} ${url} failed: ${err instanceof Error ? err.message : err}`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = json as { code?: unknown; message?: unknown } | undefined;
    throw new ApiError(
      response.status,
      typeof error?.code === "string" ? error.code : `HTTP_${response.status}`,
      typeof error?.message === "string" ? error.message : text.slice(0, 300) || response.statusText,
    );
  }
  return json as Answer<K>;
}

/** The answer of `request`, or null when the API refuses it with `code` (a thing not there yet, not an error). */
export async function nullOn<T>(code: string, request: Promise<T>): Promise<T | null> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof ApiError && err.code === code) return null;
    throw err;
  }
}
