/**
 * @module Lambda of the push channel's WebSocket API (docs/push-channel.md): `$connect` (API Gateway has
 * checked IAM auth where the stage asks for it; nothing to write until the client registers),
 * `$disconnect` (the registration goes, the client leaves its groups, the others hear of it) and
 * `$default` (a client frame: register or ping; the answer is posted back through the Management API).
 */
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from "aws-lambda";
import { handleChannelFrame } from "../lib/http/channel-frames.js";
import type { HandlerContext } from "../lib/http/context.js";
import { CHANNEL_SETTLE_MS } from "./shared/api-handler.js";
import { awsContext } from "./shared/aws-context.js";

/** One event of the WebSocket API on this container's broker. */
export async function handleChannelEvent(
  ctx: HandlerContext,
  event: Pick<APIGatewayProxyWebsocketEventV2, "requestContext" | "body">,
): Promise<APIGatewayProxyResultV2> {
  const { connectionId, routeKey } = event.requestContext;
  if (routeKey === "$connect") return { statusCode: 200 };
  if (routeKey === "$disconnect") {
    await ctx.broker.channel.disconnect(connectionId);
  } else {
    const answer = await handleChannelFrame(ctx.broker, connectionId, event.body ?? "");
    if (answer !== undefined) await ctx.broker.channel.send(connectionId, answer);
  }
  await ctx.broker.channel.settle(CHANNEL_SETTLE_MS);
  return { statusCode: 200 };
}

export const handler = async (event: APIGatewayProxyWebsocketEventV2): Promise<APIGatewayProxyResultV2> =>
  handleChannelEvent(await awsContext(), event);
