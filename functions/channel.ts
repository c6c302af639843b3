/**
 * @module Lambda of the push channel's WebSocket API (docs/push-channel.md): `$connect` (on an `iam` stage
 * API Gateway has checked the SigV4 signature; on an `acl` stage this handler checks the Nimbus signature of
 * the connect request, as the API functions check each HTTP request, and records its user; refused: the
 * API's status and `{code, message}`, and API Gateway does not open the connection),
 * `$disconnect` (the registration goes, the client leaves its groups, the others hear of it) and
 * `$default` (a client frame: register or ping; the answer is posted back through the Management API).
 */
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from "aws-lambda";
import { NimbusError } from "../lib/core/errors.js";
import type { ReceivedRequest } from "../lib/core/request-signing.js";
import { handleChannelFrame } from "../lib/http/channel-frames.js";
import type { HandlerContext } from "../lib/http/context.js";
import { HTTP_STATUS } from "../lib/protocol/index.js";
import { CHANNEL_SETTLE_MS } from "./shared/api-handler.js";
import { awsContext } from "./shared/aws-context.js";

/** What a `$connect` event adds to the other routes' events: the upgrade request's headers and query. */
export type ChannelEvent = Pick<APIGatewayProxyWebsocketEventV2, "requestContext" | "body"> & {
  headers?: Record<string, string | undefined> | undefined;
  queryStringParameters?: Record<string, string | undefined> | undefined;
};

/**
 * The connect request as its signer saw it: GET of the stage's path (`/<stage>` on the execute-api host;
 * API Gateway gives the stage, not the path), its headers by lower-case name, the query re-encoded.
 */
export function connectRequest(event: ChannelEvent): ReceivedRequest {
  const headers = new Map(Object.entries(event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const query = Object.entries(event.queryStringParameters ?? {}).filter(
    (e): e is [string, string] => e[1] !== undefined,
  );
  return {
    method: "GET",
    host: headers.get("host") ?? "",
    rawPath: `/${event.requestContext.stage}`,
    rawQueryString: new URLSearchParams(query).toString(),
    header: (name) => headers.get(name),
    body: new Uint8Array(0),
  };
}

/** One event of the WebSocket API on this container's broker. */
export async function handleChannelEvent(ctx: HandlerContext, event: ChannelEvent): Promise<APIGatewayProxyResultV2> {
  const { connectionId, routeKey } = event.requestContext;
  if (routeKey === "$connect") {
    if (ctx.auth === undefined) return { statusCode: 200 };
    try {
      const user = await ctx.auth.authenticate(connectRequest(event));
      await ctx.broker.channel.connected(connectionId, user.username);
      return { statusCode: 200 };
    } catch (err) {
      if (!(err instanceof NimbusError)) throw err;
      return { statusCode: HTTP_STATUS[err.code], body: JSON.stringify({ code: err.code, message: err.message }) };
    }
  }
  if (routeKey === "$disconnect") {
    await ctx.broker.channel.disconnect(connectionId);
  } else {
    const answer = await handleChannelFrame(ctx.broker, connectionId, event.body ?? "", ctx.auth);
    if (answer !== undefined) await ctx.broker.channel.send(connectionId, answer);
  }
  await ctx.broker.channel.settle(CHANNEL_SETTLE_MS);
  return { statusCode: 200 };
}

export const handler = async (event: ChannelEvent): Promise<APIGatewayProxyResultV2> =>
  handleChannelEvent(await awsContext(), event);
