/**
 * @module Which broker a request is for, and whether this process serves it: a broker process serves its
 * own broker only (a slave serves reads and refuses writes), the name server serves no messages, and an
 * all-in-one process serves every broker. A request for another broker gets WRONG_BROKER naming the address
 * that serves it, so the caller need not guess.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { MASTER_ID } from "../../core/topology.js";
import type { HandlerContext } from "../context.js";

export type Access = "read" | "write";

/** Where `brokerName` is served: its master for writes, every live address for reads. */
async function addressesOf(ctx: HandlerContext, brokerName: string | undefined, access: Access): Promise<string> {
  const live = await ctx.broker.nameServer.liveBrokers();
  const matching = live
    .filter((b) => brokerName === undefined || b.brokerName === brokerName)
    .filter((b) => access === "read" || b.brokerId === MASTER_ID)
    .sort((a, b) => (a.brokerName + a.brokerId < b.brokerName + b.brokerId ? -1 : 1));
  if (matching.length === 0)
    return `no live ${access === "write" ? "master" : "broker"}${brokerName ? ` ${brokerName}` : ""}`;
  return matching.map((b) => `${b.brokerName} ${b.brokerId} at ${b.address}`).join(", ");
}

/**
 * The broker name a send, pull or commit is served for here: `requested` as given on an all-in-one process,
 * or this broker's name (a request without one is for this broker). Throws WRONG_BROKER for a request this
 * process does not serve, NO_PERMISSION for a write to a slave.
 */
export async function servedBroker(
  ctx: HandlerContext,
  requested: string | undefined,
  access: Access,
): Promise<string | undefined> {
  const { role } = ctx;
  if (role.kind === "all") return requested;
  if (role.kind === "namesrv") {
    throw new NimbusError(
      ErrorCode.WRONG_BROKER,
      `this is a name server: ${access === "write" ? "send to" : "pull from"} a broker (${await addressesOf(ctx, requested, access)})`,
    );
  }
  if (requested !== undefined && requested !== role.brokerName) {
    throw new NimbusError(
      ErrorCode.WRONG_BROKER,
      `this process serves ${role.brokerName} ${role.brokerId}, not ${requested} (${await addressesOf(ctx, requested, access)})`,
    );
  }
  if (access === "write" && role.brokerId !== MASTER_ID) {
    throw new NimbusError(
      ErrorCode.NO_PERMISSION,
      `${role.brokerName} slave ${role.brokerId} does not accept messages (${await addressesOf(ctx, role.brokerName, "write")})`,
    );
  }
  return role.brokerName;
}

/** Refuses a write outside the data plane (topic admin, a transaction's end) on a slave: it takes no writes. */
export function refuseOnSlave(ctx: HandlerContext, what: string): void {
  const { role } = ctx;
  if (role.kind === "broker" && role.brokerId !== MASTER_ID) {
    throw new NimbusError(ErrorCode.NO_PERMISSION, `${role.brokerName} slave ${role.brokerId} does not ${what}`);
  }
}
