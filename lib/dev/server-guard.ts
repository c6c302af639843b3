/**
 * @module What the local server decides before it listens: whether its address may be served without
 * auth (loopback only, unless `--insecure`), the address it advertises in routes (never `0.0.0.0`), and the
 * cap on request bytes in flight (past it a request's body is dropped unread and it gets SYSTEM_BUSY).
 */
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { ErrorCode, NimbusError } from "../core/errors.js";
import type { RequestBytes } from "../core/request-bytes.js";
import { MAX_REQUEST_BYTES } from "../protocol/index.js";
import { MAX_REQUEST_FRAME_BYTES } from "../remoting/index.js";

/** Whether `host` only ever reaches this machine. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Refuses an open (no auth) server on a non-loopback address unless `insecure`, and an auth server on one without
 * TLS: user and ACL administration carries passwords (`createUser`), which must not cross a network in clear.
 */
export function checkOpenBinding(host: string, auth: boolean, insecure: boolean, tls = false): void {
  if (auth && !tls && !isLoopback(host))
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `refusing to serve ${host} with --auth over plain HTTP: passwords of createUser and updateUser would cross the ` +
        "network in clear. Give --tls-cert and --tls-key (PEM files), or serve a loopback --host",
    );
  if (auth || insecure || isLoopback(host)) return;
  throw new NimbusError(
    ErrorCode.PARAMETER_ILLEGAL,
    `refusing to serve ${host} without auth: anyone who can reach it could delete topics and rewrite offsets. ` +
      "Use --auth (with --root-user/--root-password), or --insecure to serve it open anyway",
  );
}

/** The address clients are told to use: the host itself, or for a wildcard one this machine's first IPv4. */
export function advertisedHost(host: string): string {
  const wildcard = host === "0.0.0.0" || host === "::" || host === "[::]";
  if (!wildcard) return isIP(host) === 6 ? `[${host}]` : host;
  for (const addresses of Object.values(networkInterfaces()))
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return "127.0.0.1";
}

/** The largest request any door takes: a remoting frame (8 MiB); an HTTP body or a gRPC message is at most 6 MiB. */
export const LARGEST_REQUEST_BYTES = Math.max(MAX_REQUEST_BYTES, MAX_REQUEST_FRAME_BYTES);

/** Default cap of request bytes being read or answered at once: 4 maximal requests (24 MiB). */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 4 * MAX_REQUEST_BYTES;

/**
 * Request bytes in flight: the bytes of request bodies received and not yet answered (lib/dev/request-body.ts
 * takes them as they arrive). Past the cap a request is refused with SYSTEM_BUSY, as RocketMQ answers when its
 * request queue is full, so memory stays bounded whatever clients send at once. The bytes of requests still arriving
 * hold at most half the cap (`arrivingCap`): clients trickling large requests, or stopping half-way, leave the other
 * half to requests that come whole.
 */
export class InFlightBytes implements RequestBytes {
  #used = 0;
  #arriving = 0;
  /**
   * The most the bytes of requests still arriving may hold: half the cap, and never less than the largest request
   * (`largestRequest`) when the cap holds one, so that any request may still come in pieces on an idle server.
   */
  readonly arrivingCap: number;
  constructor(
    readonly cap: number,
    largestRequest = LARGEST_REQUEST_BYTES,
  ) {
    const half = Math.floor(cap / 2);
    this.arrivingCap = cap >= largestRequest ? Math.max(half, largestRequest) : half;
  }

  get used(): number {
    return this.#used;
  }

  /** Of `used`, the bytes of requests still arriving. */
  get arriving(): number {
    return this.#arriving;
  }

  markArriving(size: number): boolean {
    if (this.#arriving + size > this.arrivingCap) return false;
    this.#arriving += size;
    return true;
  }

  settleArriving(size: number): void {
    this.#arriving -= size;
  }

  /** Takes `size` bytes if they fit under the cap (and, `arriving`, the share for requests still arriving). */
  take(size: number, arriving = false): boolean {
    if (this.#used + size > this.cap || (arriving && !this.markArriving(size))) return false;
    this.#used += size;
    return true;
  }

  /** Counts `size` bytes whether or not they fit (an answer already made): later requests see the cap reached. */
  hold(size: number): void {
    this.#used += size;
  }

  release(size: number, arriving = false): void {
    if (arriving) this.settleArriving(size);
    this.#used -= size;
  }
}
