/**
 * @module The push channel's routes: `$connect`, `$disconnect` and `$default` on the channel function of
 * manifest.ts, protected as `channelRouteProtection` says for the stage's auth: IAM (SigV4) on `$connect`
 * on an `iam` stage; on an `acl` stage the function checks the connect's Nimbus signature and each
 * registration's ACL itself (NIMBUS_AUTH, the acl table and the stage's auth secrets, as the API functions).
 * The SDK signs its connect request the way it signs every HTTP request.
 */
import { api } from "./api.js";
import { channelApi } from "./channel-api.js";
import { settings } from "./config.js";
import { createFunction } from "./functions.js";
import { CHANNEL_FUNCTIONS, CHANNEL_ROUTES, channelRouteProtection } from "./manifest.js";

// Given the stage's limits as the API functions are: it gets NIMBUS_AUTH, the acl table and the auth secrets.
const channelFunction = createFunction("Channel", CHANNEL_FUNCTIONS.Channel, api.url, {
  reservedConcurrency: settings.limits.reservedConcurrency,
});

for (const route of CHANNEL_ROUTES) {
  const protection = channelRouteProtection(settings, route);
  channelApi.route(route, channelFunction.arn, protection === "iam" ? { auth: { iam: true } } : {});
}
