/** @module The version a client reports in its heartbeats is the package's. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { it } from "node:test";
import { CLIENT_VERSION } from "../../lib/client/version.js";

it("CLIENT_VERSION is package.json's version", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  assert.equal(CLIENT_VERSION, pkg.version);
});
