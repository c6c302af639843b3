/**
 * @module Every endpoint maps to resources and actions: each one that requires auth declares `access`
 * (a rule, or `super`), so no endpoint falls back to Super-only by omission; and the ACL decision rules
 * (default deny, Deny wins, prefixes, `*`, Cluster, Super users) hold.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  type Acl,
  type AclUser,
  decide,
  groupPermission,
  resourceMatches,
  topicPermission,
  validateResourcePattern,
} from "../../lib/core/acl.js";
import { ENDPOINTS, routeKey } from "../../lib/protocol/index.js";

const alice: AclUser = { username: "alice", userType: "Normal", userStatus: "enable" };
const acl = (entries: Acl["entries"]): Acl => ({ subject: "User:alice", entries });

describe("endpoint access declarations", () => {
  it("declares resources and actions (or super) for every endpoint that requires auth; GET /health alone is open", () => {
    const unmapped = ENDPOINTS.filter((e) => e.auth === "required" && e.access === undefined).map(routeKey);
    assert.deepEqual(unmapped, [], "endpoints without an access declaration");
    assert.deepEqual(ENDPOINTS.filter((e) => e.auth === "none").map(routeKey), ["GET /health"]);
  });
});

describe("docs/security.md's access table", () => {
  it("lists every endpoint, as `METHOD path` in its first column", () => {
    const doc = readFileSync(new URL("../../docs/security.md", import.meta.url), "utf8");
    const start = doc.indexOf("| Endpoint ");
    const table = doc.slice(start, doc.indexOf("\n\n", start));
    const listed = new Set(
      table
        .split("\n")
        .map((row) => row.split("|")[1] ?? "")
        .flatMap((cell) => [...cell.matchAll(/`([A-Z]+ \/[^`?]*)[^`]*`/g)].map((m) => m[1])),
    );
    const missing = ENDPOINTS.map(routeKey).filter((key) => !listed.has(key));
    assert.deepEqual(missing, [], "endpoints missing from the table");
  });
});

describe("ACL decisions", () => {
  it("refuses by default, allows what an entry allows", () => {
    assert.equal(decide(alice, undefined, [topicPermission("T", "Pub")]).allowed, false);
    const a = acl([{ resource: "Topic:T", actions: ["Pub"], decision: "Allow" }]);
    assert.equal(decide(alice, a, [topicPermission("T", "Pub")]).allowed, true);
    assert.equal(decide(alice, a, [topicPermission("T", "Sub")]).allowed, false);
    assert.equal(decide(alice, a, [topicPermission("T2", "Pub")]).allowed, false);
  });

  it("needs every permission, any one action of each", () => {
    const a = acl([
      { resource: "Topic:T", actions: ["Sub"], decision: "Allow" },
      { resource: "Group:G", actions: ["Get"], decision: "Allow" },
    ]);
    assert.equal(decide(alice, a, [topicPermission("T", "Sub"), groupPermission("G", "Sub")]).allowed, false);
    assert.equal(decide(alice, a, [topicPermission("T", "Sub"), groupPermission("G", "Sub", "Get")]).allowed, true);
  });

  it("lets Deny win over Allow, whichever comes first", () => {
    for (const entries of [
      [
        { resource: "Topic:*", actions: ["Pub" as const], decision: "Allow" as const },
        { resource: "Topic:secret", actions: ["Pub" as const], decision: "Deny" as const },
      ],
      [
        { resource: "Topic:secret", actions: ["Pub" as const], decision: "Deny" as const },
        { resource: "Topic:*", actions: ["Pub" as const], decision: "Allow" as const },
      ],
    ]) {
      const d = decide(alice, acl(entries), [topicPermission("secret", "Pub")]);
      assert.deepEqual(d.allowed ? "allowed" : d.denied, true);
      assert.equal(decide(alice, acl(entries), [topicPermission("open", "Pub")]).allowed, true);
    }
  });

  it("matches names, prefixes, * and the cluster; never across resource types", () => {
    assert.equal(resourceMatches("Topic:orders-*", { type: "Topic", name: "orders-eu" }), true);
    assert.equal(resourceMatches("Topic:orders-*", { type: "Topic", name: "order" }), false);
    assert.equal(resourceMatches("Topic:*", { type: "Group", name: "G" }), false);
    assert.equal(resourceMatches("Group:*", { type: "Group", name: "G" }), true);
    assert.equal(resourceMatches("Cluster", { type: "Cluster", name: "" }), true);
    assert.equal(resourceMatches("Topic:T", { type: "Topic", name: "TT" }), false);
  });

  it("decides a group's retry and dead-letter topics by the group's ACL (RocketMQ 5)", () => {
    assert.deepEqual(topicPermission("%RETRY%G", "Sub").resource, { type: "Group", name: "G" });
    assert.deepEqual(topicPermission("%DLQ%G", "Sub").resource, { type: "Group", name: "G" });
    const a = acl([{ resource: "Group:G", actions: ["Sub"], decision: "Allow" }]);
    assert.equal(decide(alice, a, [topicPermission("%RETRY%G", "Sub")]).allowed, true);
    assert.equal(decide(alice, a, [topicPermission("%RETRY%H", "Sub")]).allowed, false);
  });

  it("lets a Super user do anything, and refuses malformed resource patterns", () => {
    assert.equal(decide({ ...alice, userType: "Super" }, undefined, [topicPermission("T", "Delete")]).allowed, true);
    for (const bad of ["Topic:", "Topic:a*b", "Queue:x", "topic:T", "Topic:a b"])
      assert.throws(() => validateResourcePattern(bad), /a resource is/);
    validateResourcePattern("Topic:orders-*");
  });
});
