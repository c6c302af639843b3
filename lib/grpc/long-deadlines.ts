/**
 * @module A guard for grpc-js 1.14's server-side deadline: it turns `grpc-timeout` into ms with a 32-bit `| 0`
 * and a `setTimeout`, so a deadline past ~24 days wraps to a negative or tiny timeout and the call ends at
 * once with DEADLINE_EXCEEDED. RocketMQ's Java client opens its Telemetry stream with `grpc-timeout:
 * 31535999M` (a year), which would be cut the moment it opens. Before grpc-js reads a request's headers, a
 * timeout longer than `MAX_SERVER_DEADLINE_MS` is dropped: the call has no server-side deadline (the client
 * still keeps its own). grpc-js keeps its HTTP/2 servers in a private field; if a later version renames it,
 * this finds none and says so.
 */
import type { Http2Server, IncomingHttpHeaders } from "node:http2";
import type { Server } from "@grpc/grpc-js";

/** The longest server-side deadline kept: under 2^31 ms, what a Node timer holds. */
export const MAX_SERVER_DEADLINE_MS = 2 ** 31 - 1;

const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** A `grpc-timeout` value in ms, or NaN when malformed (grpc-js refuses those itself). */
export function timeoutMs(value: string): number {
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  return m ? Number(m[1]) * (UNIT_MS[m[2] ?? ""] ?? Number.NaN) : Number.NaN;
}

function dropLongTimeout(_stream: unknown, headers: IncomingHttpHeaders): void {
  const value = headers["grpc-timeout"];
  if (typeof value === "string" && timeoutMs(value) > MAX_SERVER_DEADLINE_MS) delete headers["grpc-timeout"];
}

/** Installs the guard on every HTTP/2 server of `server` (call after it is bound). True when it found one. */
export function guardLongDeadlines(server: Server): boolean {
  const servers = (server as unknown as { http2Servers?: Map<Http2Server, unknown> }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) {
    console.error("nimbus grpc: cannot guard long deadlines (grpc-js internals changed); Java clients may fail");
    return false;
  }
  for (const http2 of servers.keys()) http2.prependListener("stream", dropLongTimeout);
  return true;
}
