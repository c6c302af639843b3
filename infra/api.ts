/**
 * @module The HTTP API (API Gateway HTTP API, payload v2): every route of manifest.ts on the function of
 * its handler module. Auth on every route but `GET /health` (routeProtection: ACLs checked by the functions,
 * or IAM by API Gateway) unless the stage says `public`; throttling and reserved concurrency per stage;
 * CORS only for the console's origins (the stage's console site and `consoleOrigins`), since apps and the SDK
 * are not browsers.
 */
import { settings } from "./config.js";
import { consoleSite } from "./console.js";
import { createFunction } from "./functions.js";
import {
  API_FUNCTIONS,
  API_ROUTES,
  type ApiFunctionName,
  reservedConcurrency,
  routeProtection,
  SCHEDULED_FUNCTIONS,
} from "./manifest.js";

export const api = new sst.aws.ApiGatewayV2("Api", {
  // The stage's own console site, plus any other console origins the stage lists.
  cors: {
    allowOrigins: consoleSite.url.apply((url) => [url.replace(/\/+$/, ""), ...settings.consoleOrigins]),
    allowMethods: ["GET", "POST", "PUT", "DELETE"],
    // content-type for JSON bodies; the rest are what a SigV4-signing browser sends.
    allowHeaders: [
      "content-type",
      "authorization",
      "x-amz-date",
      "x-amz-security-token",
      "x-amz-content-sha256",
      // The nonce of a Nimbus signature (docs/security.md).
      "x-nimbus-nonce",
    ],
    maxAge: "1 hour",
  },
  accessLog: { retention: settings.production ? "3 months" : "1 week" },
  transform: {
    // Throttling for every route of the stage (over it: 429, which the SDK retries as SYSTEM_BUSY).
    stage: (args) => {
      args.defaultRouteSettings = {
        throttlingRateLimit: settings.limits.rateLimit,
        throttlingBurstLimit: settings.limits.burstLimit,
      };
    },
  },
});

/**
 * The scheduled `Dispatch` function (infra/schedules.ts puts it on its schedule), made here because Send wakes it
 * at send time and so needs its name. Absent on a slave cell (delivery is the master stage's).
 */
export const dispatchFunction =
  settings.cell === undefined ? createFunction("Dispatch", SCHEDULED_FUNCTIONS.Dispatch, api.url) : undefined;

const functions = Object.fromEntries(
  Object.entries(API_FUNCTIONS).map(([name, spec]) => [
    name,
    createFunction(
      `Api${name}`,
      spec,
      api.url,
      { reservedConcurrency: reservedConcurrency(settings, name as ApiFunctionName) },
      { Dispatch: dispatchFunction },
    ),
  ]),
) as Record<ApiFunctionName, sst.aws.Function>;

for (const spec of API_ROUTES) {
  // The function's ARN, not a handler path: a path would make SST build one function per route. With `acl`
  // the function checks the caller itself (NIMBUS_AUTH); with `iam` API Gateway does.
  const protection = routeProtection(settings, spec);
  api.route(spec.route, functions[spec.fn].arn, { auth: protection === "iam" ? { iam: true } : false });
}

// Probes that use HEAD get GET's answer without a body (the handler treats HEAD as GET); open like GET /health.
api.route("HEAD /health", functions.NameServer.arn, { auth: false });
