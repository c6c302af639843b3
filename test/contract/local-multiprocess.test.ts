/**
 * @module Cross-process safety of the embedded store: 4 OS processes each run 100 conditional adds on
 * one item of one data folder; every add must land exactly once (total 400, each value seen once).
 */
import assert from "node:assert/strict";
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createLocalStorage } from "../../lib/storage/local/index.js";

const WORKER = fileURLToPath(new URL("../support/local-add-worker.ts", import.meta.url));
const PROCESSES = 4;
const ADDS = 100;

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

  it(`${PROCESSES} processes x ${ADDS} conditional adds on one item give ${PROCESSES * ADDS}`, async () => {
    // Create the database and table once, so the workers race only on the item.
    const storage = createLocalStorage({ dataDir });
    const table = storage.table({ name: "multiprocess", sortKeyType: "number" });
    for (let i = 0; i < PROCESSES; i++) {
      children.push(fork(WORKER, [dataDir, String(ADDS)], { execArgv: ["--import", "tsx"], stdio: "inherit" }));
    }
    await Promise.all(children.map((c) => nextMessage(c, (m) => m === "ready")));
    const results = children.map((c) => nextMessage<{ seen: number[] }>(c, (m) => typeof m === "object"));
    for (const child of children) child.send("go");
    const seen = (await Promise.all(results)).flatMap((r) => r.seen);

    assert.equal((await table.get({ pk: "counter", sk: 0 }, { consistent: true }))?.n, PROCESSES * ADDS);
    assert.deepEqual(
      seen.sort((a, b) => a - b),
      Array.from({ length: PROCESSES * ADDS }, (_, i) => i + 1),
      "every add saw its own, distinct result",
    );
    await storage.close();
  });
});
