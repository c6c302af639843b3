/**
 * @module The push channel's WebSocket API (API Gateway; docs/push-channel.md). Declared apart from its
 * routes (channel.ts) so that the functions that post hints can link to it (infra/functions.ts): the link
 * grants `execute-api:ManageConnections` on its connections and nothing else.
 */
import { settings } from "./config.js";

export const channelApi = new sst.aws.ApiGatewayWebSocket("Channel", {
  accessLog: { retention: settings.production ? "3 months" : "1 week" },
});
