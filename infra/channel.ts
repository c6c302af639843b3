/**
 * @module The push channel's routes: `$connect`, `$disconnect` and `$default` on the channel function of
 * manifest.ts. IAM (SigV4) auth on `$connect` where the stage asks for it, as on the HTTP routes: the SDK
 * signs its connect request the way it signs every HTTP request.
 */
import { api } from "./api.js";
import { channelApi } from "./channel-api.js";
import { settings } from "./config.js";
import { createFunction } from "./functions.js";
import { CHANNEL_FUNCTIONS, CHANNEL_ROUTES } from "./manifest.js";

const channelFunction = createFunction("Channel", CHANNEL_FUNCTIONS.Channel, api.url);

for (const route of CHANNEL_ROUTES) {
  channelApi.route(route, channelFunction.arn, route === "$connect" && settings.iamAuth ? { auth: { iam: true } } : {});
}
