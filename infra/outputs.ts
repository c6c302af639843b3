/** @module What `sst deploy` prints and `.sst/outputs.json` keeps: how apps, the SDK and the CLI reach the stage. */

import { api, subscriptionsFunction } from "./api.js";
import { channelApi } from "./channel-api.js";
import { settings } from "./config.js";
import { consoleSite } from "./console.js";
import { grpcEndpoint } from "./grpc.js";
import { dispatchRole } from "./schedules.js";
import { bucket, tableNamesJson, tableRegionsJson } from "./storage.js";

export const outputs = {
  /** The endpoint for the SDK (`endpoints`), the CLI and apps; also every broker's address. */
  api: api.url,
  /** The stage's web console, opened on this stage's API (docs/console.md). */
  console: $interpolate`${consoleSite.url}/?api=${api.url}`,
  /** The push channel (the SDK finds it with GET /push-channel; docs/push-channel.md). */
  channel: channelApi.url,
  region: settings.region,
  /** `acl` (sign with a user's keys), `iam` (SigV4 with AWS credentials) or `public`. */
  auth: settings.auth,
  bucket: bucket.name,
  tables: tableNamesJson,
  /** What a slave cell's settings name (`replicaOf`, `nameServer`) and a master's `replicas[].bucket`. */
  tableRegions: tableRegionsJson,
  /** RocketMQ 5 clients' `endpoints` (with TLS), when the stage sets `grpc` (docs/grpc.md). */
  grpc: grpcEndpoint?.url ?? "off",
  /** RocketMQ 4.x clients' `namesrvAddr`, when the stage sets `grpc.remoting` (docs/remoting.md). */
  remoting: grpcEndpoint?.remoting ?? "off",
  /** What a subscriber function's resource policy grants `lambda:InvokeFunction` to (docs/subscriptions.md). */
  dispatchRole: dispatchRole ?? "off",
  /** The function `NimbusSubscription` (nimbus-mq/sst) registers an app's subscription with at deploy time. */
  subscriptionsFunction: subscriptionsFunction.name,
};
