/** @module What every route gets: the broker, built once per process (per Lambda container, or by the local server), and what the process serves. */
import type { Broker } from "../broker/index.js";
import type { AclUser } from "../core/acl.js";
import type { RequestAuth } from "./authorize.js";

/**
 * What a process serves, as RocketMQ deploys it: `all` is the name server and every configured master in
 * one (`nimbus dev`, a Lambda stage); `namesrv` the name server and admin routes (`nimbus namesrv`);
 * `broker` one broker, a master (brokerId 0) or a read-only slave (`nimbus broker`).
 */
export type ServerRole =
  | { kind: "all" }
  | { kind: "namesrv" }
  | { kind: "broker"; brokerName: string; brokerId: number };

export interface HandlerContext {
  broker: Broker;
  role: ServerRole;
  /** The push channel's WebSocket URL, when this deployment serves one (docs/push-channel.md). */
  channelUrl?: string | undefined;
  /** Signatures and ACLs are checked on every route but those declared `auth: "none"`; absent: open. */
  auth?: RequestAuth | undefined;
  /**
   * The send-time wake of subscription delivery (AWS: lib/broker/subscriptions' DispatchWake); the handler
   * waits for its wakes, bounded, before answering, as for the push channel's hints.
   */
  dispatchWake?: { settle(ms: number): Promise<void> } | undefined;
  /** The user who signed this request (set per request when `auth` is on), for checks a route decides itself. */
  caller?: AclUser | undefined;
  /**
   * Set per request where a load shedder runs: runs `wait` (a long poll's wait for an event) without holding the
   * request's work slot, and takes a turn again after it (SYSTEM_BUSY past the wait bound).
   */
  suspend?: Suspend | undefined;
}

/** A wait that holds no work slot (lib/http/load-shedder.ts `parkWhile`). */
export type Suspend = <T>(wait: () => Promise<T>) => Promise<T>;
