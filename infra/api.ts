/**
 * @module The HTTP API (API Gateway HTTP API, payload v2): every route of manifest.ts on the function of
 * its handler module. IAM (SigV4) auth on every route but `GET /health` where the stage asks for it;
 * CORS only for the console's origins (the stage's console site and `consoleOrigins`), since apps and the SDK
 * are not browsers.
 */
import { settings } from "./config.js";
import { consoleSite } from "./console.js";
import { createFunction } from "./functions.js";
import { API_FUNCTIONS, API_ROUTES, type ApiFunctionName } from "./manifest.js";

export const api = new sst.aws.ApiGatewayV2("Api", {
  // The stage's own console site, plus any other console origins the stage lists.
  cors: {
    allowOrigins: consoleSite.url.apply((url) => [url.replace(/\/+$/, ""), ...settings.consoleOrigins]),
    allowMethods: ["GET", "POST", "PUT", "DELETE"],
    // content-type for JSON bodies; the rest are what a SigV4-signing browser sends.
    allowHeaders: ["content-type", "authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"],
    maxAge: "1 hour",
  },
  accessLog: { retention: settings.production ? "3 months" : "1 week" },
});

const functions = Object.fromEntries(
  Object.entries(API_FUNCTIONS).map(([name, spec]) => [name, createFunction(`Api${name}`, spec, api.url)]),
) as Record<ApiFunctionName, sst.aws.Function>;

for (const { route, fn, public: open } of API_ROUTES) {
  // The function's ARN, not a handler path: a path would make SST build one function per route.
  api.route(route, functions[fn].arn, { auth: settings.iamAuth && open !== true ? { iam: true } : false });
}
