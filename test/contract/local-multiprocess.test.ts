/**
 * @module Cross-process safety of the embedded store: 4 OS processes each claim 100 slots of one partition
 * of one data folder with conditional puts (`{ exists: false }`), walking the same sort keys at once. Every
 * slot must go to exactly one process, none may be skipped, and a lost put must report the winner's item.
 */
import assert from "node:assert/strict";
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { AttrValue } from "../../lib/storage/table.js";

const WORKER = fileURLToPath(new URL("../support/local-claim-worker.ts", import.meta.url));
const PROCESSES = 4;
const CLAIMS = 100;

interface Claims {
  won: number[];
  lost: { sk: number; holder: AttrValue | undefined }[];
}

/** Resolves with the child's first message that passes `accept`; rejects if it exits first. */
function nextMessage<T>(child: ChildProcess, accept: (m: unknown) => boolean): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (!accept(m)) return;
      child.off("exit", onExit);
      child.off("message", onMessage);
      resolve(m as T);
    };
    const onExit = (code: number | null) => reject(new Error(`worker exited with ${code} before answering`));
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

describe("local storage shared by several processes", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-multiprocess-"));
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) if (child.exitCode === null) child.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`${PROCESSES} processes x ${CLAIMS} conditional puts claim ${PROCESSES * CLAIMS} slots, each exactly once`, async () => {
    // Create the database and table once, so the workers race only on the items.
    const storage = createLocalStorage({ dataDir });
    const table = storage.table({ name: "multiprocess", sortKeyType: "number" });
    for (let i = 0; i < PROCESSES; i++) {
      const writer = `w${i}`;
      children.push(
        fork(WORKER, [dataDir, String(CLAIMS), writer], { execArgv: ["--import", "tsx"], stdio: "inherit" }),
      );
    }
    await Promise.all(children.map((c) => nextMessage(c, (m) => m === "ready")));
    const results = children.map((c) => nextMessage<Claims>(c, (m) => typeof m === "object"));
    for (const child of children) child.send("go");
    const claims = await Promise.all(results);

    const owner = new Map<number, string>();
    for (const [i, { won }] of claims.entries()) for (const sk of won) owner.set(sk, `w${i}`);
    assert.deepEqual(
      claims.flatMap((c) => c.won).sort((a, b) => a - b),
      Array.from({ length: PROCESSES * CLAIMS }, (_, i) => i),
      "every slot won by exactly one process, none skipped",
    );
    const page = await table.query("slots", { consistent: true });
    assert.deepEqual(
      page.items.map((item) => [item.sk, item.writer]),
      [...owner].sort(([a], [b]) => a - b),
      "each stored item is its winner's",
    );
    for (const [i, { lost }] of claims.entries()) {
      for (const { sk, holder } of lost) {
        assert.equal(holder, owner.get(sk), `w${i} lost slot ${sk} to the item stored there`);
        assert.notEqual(holder, `w${i}`);
      }
    }
    await storage.close();
  });
});
