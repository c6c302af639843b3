/**
 * @module What a request handler of the door gets: the broker's context, the request and its header fields, and
 * its connection's scope (the broker its port stands for, the client it heard from, its subscriptions).
 */
import type { Permission } from "../core/acl.js";
import type { RequestBytes } from "../core/request-bytes.js";
import type { UntakenAnswers } from "../core/untaken-answers.js";
import type { HandlerContext } from "../http/context.js";
import type { HeartbeatData } from "../protocol/index.js";
import type { Answer } from "./codes.js";
import type { Fields } from "./fields.js";
import type { RemotingCommand } from "./frame.js";
import type { PullWaits } from "./pull-waits.js";
import type { HostAddress } from "./wire-message.js";

/** Subscriptions a connection's heartbeats named, at most (per group and topic). */
export const MAX_SCOPE_SUBSCRIPTIONS = 1024;

export interface Subscription {
  subString: string;
  expressionType: "TAG" | "SQL92";
}

/** One connection's state. */
export interface Scope {
  /** The broker a request without a broker name is for: the one whose address the client dialled. */
  readonly brokerName: string;
  /** The address this connection reached, as pull answers name the store host. */
  readonly storeHost: HostAddress;
  /** The client's address, as send answers' born host. */
  readonly remote: HostAddress;
  /** The client id of the last heartbeat on this connection. */
  clientId: string | undefined;
  /** `group\ntopic` -> the subscription the client's last heartbeat named. */
  readonly subscriptions: Map<string, Subscription>;
  /** The client's last heartbeat on this connection, as registered (check-backs re-register it to take theirs). */
  heartbeat: HeartbeatData | undefined;
  /** Aborted when the connection closes (waiting pulls end). */
  readonly closed: AbortSignal;
  /** Sends the client a oneway request over this connection (RocketMQ's broker-to-client calls). */
  readonly notify: (code: number, extFields: Record<string, string>, body?: Uint8Array) => void;
  /** Sends the client a request and waits for its answer (client-calls.ts: bounded, with a timeout). */
  readonly call: (
    code: number,
    extFields: Record<string, string>,
    body?: Uint8Array,
    timeoutMs?: number,
  ) => Promise<RemotingCommand>;
}

/** What the door tells its handlers. */
export interface DoorView {
  /** The process's budget for requests' bytes in flight: past it a request is refused SYSTEM_BUSY at once. */
  readonly requestBytes: RequestBytes;
  /** The process's untaken answers: past their bound an answer is SYSTEM_BUSY in its place. */
  readonly untakenAnswers: UntakenAnswers;
  /** The address a client should call for a broker (its master or a slave), given the one it registered. */
  addressOf(brokerName: string, brokerId: number, registered: string): string;
  readonly waits: PullWaits;
  /** The longest a pull waits for messages (RocketMQ suspends up to 15 s). */
  readonly maxSuspendMs: number;
  /**
   * The client of `scope` sent a heartbeat (`previous`: the id it heartbeated as before): calls to it (check-backs)
   * may go over this connection.
   */
  heard(scope: Scope, previous: string | undefined): void;
  /** The newest open connection of a client that heartbeated on this door, if any (calls to it go there). */
  scopeOf(clientId: string): Scope | undefined;
  /** A consumer joined or left `group` here: its consumers connected to this door rebalance now. */
  membersChanged(group: string): void;
}

export interface Call {
  readonly ctx: HandlerContext;
  readonly door: DoorView;
  readonly request: RemotingCommand;
  readonly fields: Fields;
  readonly scope: Scope;
  /**
   * NO_PERMISSION unless the request's signer has every one of `needs` (nothing to check with auth off): for a
   * check on what the handler found stored; what a request code needs up front is in access.ts.
   */
  readonly authorize: (needs: readonly Permission[]) => Promise<void>;
}

export type Handler = (call: Call) => Promise<Answer>;

/** The JSON body of a request, parsed (MESSAGE_ILLEGAL when absent or not JSON). */
export function jsonOf(call: Call): unknown {
  const body = call.request.body;
  if (body === undefined) return undefined;
  try {
    return JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch {
    return undefined;
  }
}
