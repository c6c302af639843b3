/**
 * @module The end-to-end suite of the HTTP API, registered once per storage mode (`local.test.ts`,
 * `aws.test.ts`, `aws-dynamodb-local.test.ts`): every case runs unchanged against the local server on the
 * embedded store and on DynamoDB + S3 emulators (dynalite, and Amazon's DynamoDB Local). Each group of cases starts its own server (on free loopback ports) and stops it.
 *
 * @example
 * e2eSuite("local");
 */
import { describe } from "node:test";
import { MODE_BACKEND, MODE_LABEL, modeUnavailable, type ServerMode } from "../support/server-fixture.js";
import { holdEmulators } from "../support/shared-emulators.js";
import { binaryBatchCases } from "./binary-batch-suite.js";
import { configCases } from "./config-suite.js";
import { endpointCases } from "./endpoints-suite.js";
import { adminErrorCases } from "./errors-admin-suite.js";
import { dataErrorCases } from "./errors-data-suite.js";
import { groupCommitCases } from "./group-commit-suite.js";
import { groupCases } from "./groups-suite.js";
import { handoverEndpointCases } from "./handover-endpoints-suite.js";
import { pullCases } from "./pull-suite.js";
import { queueCases } from "./queues-suite.js";
import { restartCases } from "./restart-suite.js";
import { sendCases } from "./send-suite.js";
import { publicTargetCases, subscriptionCases } from "./subscriptions-suite.js";

export function e2eSuite(mode: ServerMode): void {
  // Skipped, with the reason, only where the mode cannot run here (DynamoDB Local without Java).
  describe(`e2e (${MODE_LABEL[mode]})`, { skip: modeUnavailable(mode) ?? false }, () => {
    // One emulator set for the whole suite (DynamoDB Local is a JVM: start it once, not per server).
    if (mode !== "local") holdEmulators(MODE_BACKEND[mode]);
    endpointCases(mode);
    handoverEndpointCases(mode);
    queueCases(mode);
    configCases(mode);
    sendCases(mode);
    pullCases(mode);
    binaryBatchCases(mode);
    groupCommitCases(mode);
    groupCases(mode);
    dataErrorCases(mode);
    adminErrorCases(mode);
    restartCases(mode);
    subscriptionCases(mode);
    publicTargetCases(mode);
  });
}
