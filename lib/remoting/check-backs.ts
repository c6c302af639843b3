/**
 * @module Transaction check-backs over a client's connection (RocketMQ's CHECK_TRANSACTION_STATE, a oneway
 * request from broker to producer). The broker's checker leaves a check for a live producer of the group; the
 * door takes it as every door does, with a heartbeat (`ClientService.heartbeat`: the connection's last one,
 * registered again), at once when the checker of this process tells it, and with each heartbeat the client sends.
 * The request carries the half message in the stored-message encoding, with its producer group (PGROUP), which
 * is how the client picks the producer that answers; the answer is an END_TRANSACTION (produce.ts).
 */
import { ErrorCode, isNimbusError } from "../core/errors.js";
import { MessageConst } from "../core/message.js";
import type { HandlerContext } from "../http/context.js";
import type { PulledMessage, TransactionCheck } from "../protocol/index.js";
import type { Scope } from "./call.js";
import { RequestCode } from "./codes.js";
import { encodeStored, offsetMsgId, physicalOffset } from "./wire-message.js";

/** Registers the connection's client again and sends it the check-backs waiting for it. */
export async function takeChecks(ctx: HandlerContext, scope: Scope): Promise<void> {
  const hb = scope.heartbeat;
  if (hb === undefined || scope.closed.aborted) return;
  await sendChecks(ctx, scope, await ctx.broker.clients.heartbeat(hb));
}

export async function sendChecks(
  ctx: HandlerContext,
  scope: Scope,
  checks: readonly TransactionCheck[],
): Promise<void> {
  for (const check of checks) {
    let message: PulledMessage;
    try {
      message = await ctx.broker.transactions.message(check.producerGroup, check.transactionId);
    } catch (err) {
      // Gone with retention, or ended meanwhile: nothing to ask about.
      if (isNimbusError(err, ErrorCode.QUERY_NOT_FOUND)) continue;
      throw err;
    }
    const properties = {
      ...message.properties,
      [MessageConst.TRAN_MSG]: "true",
      [MessageConst.PGROUP]: check.producerGroup,
    };
    const commitLogOffset = physicalOffset(message.topic, message.brokerName, message.queueId, message.queueOffset);
    const hosts = { storeHost: scope.storeHost, bornHost: scope.storeHost };
    scope.notify(
      RequestCode.CHECK_TRANSACTION_STATE,
      {
        tranStateTableOffset: String(message.queueOffset),
        commitLogOffset: String(commitLogOffset),
        msgId: message.msgId,
        transactionId: check.transactionId,
        offsetMsgId: offsetMsgId(scope.storeHost, commitLogOffset),
        bname: message.brokerName,
      },
      encodeStored({ ...message, properties }, hosts),
    );
  }
}
