/**
 * @module The POP contract (pop-contract.ts) on both storage modes: the embedded adapter, and the AWS
 * adapter on dynalite + s3rver. Run with `--openssl-legacy-provider` (`npm test` sets it).
 */
import { describe } from "node:test";
import { openAwsFixture } from "../support/aws-fixture.js";
import { openLocalFixture } from "../support/local-fixture.js";
import { holdEmulators } from "../support/shared-emulators.js";
import { popContract } from "./pop-contract.js";

popContract("local (SQLite + files)", openLocalFixture);

describe("aws (dynalite + s3rver)", () => {
  holdEmulators("dynalite");
  popContract("aws (dynalite + s3rver)", openAwsFixture);
});
