/** NIMBUS_AUTH for `nimbus dev`: "off" turned auth on; now parsed. */
import assert from "node:assert/strict";
import { it } from "node:test";
import { InvalidArgumentError } from "commander";
import { authFromEnv } from "../../lib/cli/dev-servers.js";

it("NIMBUS_AUTH: on/1/true turn auth on, off/0/false/unset leave it off, other values are refused", () => {
  for (const on of ["1", "true", "on", "ON", "acl"]) assert.equal(authFromEnv(on), true, on);
  for (const off of [undefined, "", "0", "false", "off", "OFF"]) assert.equal(authFromEnv(off), false, String(off));
  assert.throws(() => authFromEnv("maybe"), InvalidArgumentError);
});
