/**
 * @module The end-to-end suite of the HTTP API, registered once per storage mode (`local.test.ts`,
 * `aws.test.ts`): every case runs unchanged against the local server on the embedded store and on
 * DynamoDB + S3 emulators. Each group of cases starts its own server (on free loopback ports) and stops it.
 *
 * @example
 * e2eSuite("local");
 */
import { describe } from "node:test";
import { MODE_LABEL, type ServerMode } from "../support/server-fixture.js";
import { configCases } from "./config-suite.js";
import { endpointCases } from "./endpoints-suite.js";
import { adminErrorCases } from "./errors-admin-suite.js";
import { dataErrorCases } from "./errors-data-suite.js";
import { pullCases } from "./pull-suite.js";
import { queueCases } from "./queues-suite.js";
import { restartCases } from "./restart-suite.js";
import { sendCases } from "./send-suite.js";

export function e2eSuite(mode: ServerMode): void {
  describe(`e2e (${MODE_LABEL[mode]})`, () => {
    endpointCases(mode);
    queueCases(mode);
    configCases(mode);
    sendCases(mode);
    pullCases(mode);
    dataErrorCases(mode);
    adminErrorCases(mode);
    restartCases(mode);
  });
}
