/** @module Queries by message id and by key end to end, on the embedded store and on DynamoDB + S3 (dynalite + s3rver). */
import { describe } from "node:test";
import { MODE_LABEL } from "../support/server-fixture.js";
import { queryCases } from "./query-suite.js";

for (const mode of ["local", "aws"] as const) {
  describe(MODE_LABEL[mode], () => queryCases(mode));
}
