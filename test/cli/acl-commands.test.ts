/**
 * @module The built CLI against `nimbus dev --auth` run as a real process: the ACL 2.0 commands round-trip
 * (createUser ... listAcl) with a Super user's keys from NIMBUS_ACCESS_KEY/NIMBUS_SECRET_KEY, a Normal user
 * gets exactly what its ACL says, and the local server refuses a non-loopback --host without --auth unless
 * --insecure, then advertising a real address, never 0.0.0.0.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureBuilt, nimbus, type RunningCli, spawnNimbus, tableRows } from "../support/cli-runner.js";

const ROOT_ENV = { NIMBUS_ACCESS_KEY: "admin", NIMBUS_SECRET_KEY: "admin-secret-1" };

describe("nimbus ACL commands against nimbus dev --auth", () => {
  const running: RunningCli[] = [];
  let dataDir = "";
  let url = "";
  after(async () => {
    for (const r of running) if (r.child.exitCode === null) r.child.kill("SIGTERM");
    await Promise.all(running.map((r) => r.exited));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  before(async () => {
    await ensureBuilt();
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-acl-cli-"));
    const dev = spawnNimbus(["dev", "--port", "0", "--data-dir", dataDir, "--auth", "--root-user", "admin"], {
      env: { NIMBUS_ROOT_PASSWORD: ROOT_ENV.NIMBUS_SECRET_KEY },
    });
    running.push(dev);
    await dev.waitForStdout(/listening on (http:\/\/\S+)/);
    url = /listening on (http:\/\/\S+)/.exec(dev.stdout())?.[1] ?? "";
    assert.match(dev.stdout(), /auth on, root user admin/);
  });

  const asRoot = (args: string[]) => nimbus(args, { url, env: ROOT_ENV });

  it("keeps the master key in the data folder, readable by its owner only", () => {
    assert.equal(statSync(path.join(dataDir, "acl-master.key")).mode & 0o077, 0);
  });

  it("refuses unsigned commands and a wrong secret with UNAUTHENTICATED (exit 1)", async () => {
    const unsigned = await nimbus(["topicList"], { url });
    assert.equal(unsigned.code, 1);
    assert.match(unsigned.stderr, /UNAUTHENTICATED/);
    assert.match(
      unsigned.stderr,
      /set NIMBUS_ACCESS_KEY and NIMBUS_SECRET_KEY/,
      "the unsigned call is told how to sign",
    );
    const wrong = await nimbus(["topicList"], { url, env: { ...ROOT_ENV, NIMBUS_SECRET_KEY: "nope-nope-1" } });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /UNAUTHENTICATED/);
    assert.doesNotMatch(wrong.stderr, /set NIMBUS_ACCESS_KEY/, "a signed call with a wrong secret gets no such hint");
  });

  it("createUser, getUser, listUser, updateUser round-trip; the secret is never printed", async () => {
    const created = await asRoot(["createUser", "-u", "alice", "-p", "alice-secret-1"]);
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(tableRows(created.stdout), [["alice", "Normal", "enable"]]);
    const got = await asRoot(["getUser", "-u", "alice", "--json"]);
    assert.deepEqual(JSON.parse(got.stdout), { username: "alice", userType: "Normal", userStatus: "enable" });
    assert.doesNotMatch(got.stdout, /alice-secret-1/);
    const listed = await asRoot(["listUser", "-f", "ali"]);
    assert.deepEqual(tableRows(listed.stdout), [["alice", "Normal", "enable"]]);
    const updated = await asRoot(["updateUser", "-u", "alice", "-s", "disable"]);
    assert.deepEqual(tableRows(updated.stdout), [["alice", "Normal", "disable"]]);
    assert.equal((await asRoot(["updateUser", "-u", "alice", "-s", "enable"])).code, 0);
  });

  it("createAcl, updateAcl, getAcl, listAcl, deleteAcl round-trip, and the user gets exactly its ACL", async () => {
    const alice = { NIMBUS_ACCESS_KEY: "alice", NIMBUS_SECRET_KEY: "alice-secret-1" };
    assert.equal((await asRoot(["updateTopic", "-t", "orders-eu", "-c", "DefaultCluster"])).code, 0);
    const denied = await nimbus(["topicStatus", "-t", "orders-eu"], { url, env: alice });
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /NO_PERMISSION: User:alice has no Get\|Sub permission on Topic:orders-eu/);

    const created = await asRoot([
      "createAcl",
      "-s",
      "User:alice",
      "-r",
      "Topic:orders-*",
      "-a",
      "Get,Pub",
      "-d",
      "Allow",
    ]);
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(tableRows(created.stdout), [["User:alice", "Topic:orders-*", "Get,Pub", "Allow"]]);
    assert.equal((await nimbus(["topicStatus", "-t", "orders-eu"], { url, env: alice })).code, 0);

    const updated = await asRoot(["updateAcl", "-s", "User:alice", "-r", "Topic:orders-*", "-a", "Get", "-d", "Deny"]);
    assert.deepEqual(tableRows(updated.stdout), [["User:alice", "Topic:orders-*", "Get", "Deny"]]);
    assert.equal((await nimbus(["topicStatus", "-t", "orders-eu"], { url, env: alice })).code, 1);

    const got = await asRoot(["getAcl", "-s", "User:alice", "--json"]);
    assert.deepEqual(JSON.parse(got.stdout), {
      subject: "User:alice",
      entries: [{ resource: "Topic:orders-*", actions: ["Get"], decision: "Deny" }],
    });
    const listed = await asRoot(["listAcl", "-r", "orders"]);
    assert.deepEqual(tableRows(listed.stdout), [["User:alice", "Topic:orders-*", "Get", "Deny"]]);
    const deletedAcl = await asRoot(["deleteAcl", "-s", "User:alice"]);
    assert.equal(deletedAcl.code, 0, deletedAcl.stderr);
    const gone = await asRoot(["getAcl", "-s", "User:alice"]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /QUERY_NOT_FOUND/);
  });

  it("a Normal user cannot administer users (NO_PERMISSION); deleteUser removes the user", async () => {
    const alice = { NIMBUS_ACCESS_KEY: "alice", NIMBUS_SECRET_KEY: "alice-secret-1" };
    const refused = await nimbus(["createUser", "-u", "eve", "-p", "eve-secret-1", "-t", "Super"], { url, env: alice });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /NO_PERMISSION: only a Super user/);
    const deleted = await asRoot(["deleteUser", "-u", "alice"]);
    assert.equal(deleted.code, 0, deleted.stderr);
    const after = await nimbus(["topicList"], { url, env: alice });
    assert.match(after.stderr, /UNAUTHENTICATED/);
  });
});

describe("nimbus dev on a non-loopback address", () => {
  it("refuses --host 0.0.0.0 without --auth (exit 1), saying to use --auth or --insecure", async () => {
    await ensureBuilt();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-host-"));
    try {
      const result = await nimbus(["dev", "--port", "0", "--host", "0.0.0.0", "--data-dir", dataDir]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /refusing to serve 0\.0\.0\.0 without auth.*--auth.*--insecure/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("with --insecure starts, and advertises a real address rather than 0.0.0.0", async () => {
    await ensureBuilt();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-host-"));
    const dev = spawnNimbus(["dev", "--port", "0", "--host", "0.0.0.0", "--insecure", "--data-dir", dataDir]);
    try {
      await dev.waitForStdout(/listening on (http:\/\/\S+)/);
      const advertised = /listening on (http:\/\/\S+)/.exec(dev.stdout())?.[1] ?? "";
      assert.doesNotMatch(advertised, /0\.0\.0\.0/);
      assert.match(dev.stdout(), /NO AUTH, --insecure/);
      const port = new URL(advertised).port;
      const cluster = await nimbus(["clusterList", "--json"], { url: `http://127.0.0.1:${port}` });
      assert.equal(cluster.code, 0, cluster.stderr);
      assert.doesNotMatch(cluster.stdout, /0\.0\.0\.0/);
    } finally {
      dev.child.kill("SIGTERM");
      await dev.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
