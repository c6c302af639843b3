/** @module SQL92 message filters end to end through the SDK, on the embedded store and on DynamoDB + S3 (dynalite + s3rver). */
import { describe } from "node:test";
import { MODE_LABEL } from "../support/server-fixture.js";
import { sql92FilterCases } from "./sql92-filter-suite.js";

for (const mode of ["local", "aws"] as const) {
  describe(MODE_LABEL[mode], () => sql92FilterCases(mode));
}
