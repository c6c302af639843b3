/**
 * @module The subscription groups contract (groups-contract.ts) on both storage modes: the embedded adapter,
 * and the AWS adapter on dynalite + s3rver. Run with `--openssl-legacy-provider` (`npm test` sets it).
 */
import { describe } from "node:test";
import { openAwsFixture } from "../support/aws-fixture.js";
import { openLocalFixture } from "../support/local-fixture.js";
import { holdEmulators } from "../support/shared-emulators.js";
import { groupsContract } from "./groups-contract.js";

groupsContract("local (SQLite + files)", openLocalFixture);

describe("aws (dynalite + s3rver)", () => {
  holdEmulators("dynalite");
  groupsContract("aws (dynalite + s3rver)", openAwsFixture);
});
