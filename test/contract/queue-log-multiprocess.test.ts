/**
 * The chain rule across OS processes: 4 processes x 5 appenders x 50 batches on one queue of one shared
 * embedded store (SQLite in WAL mode + object folder) give disjoint, gap-free offsets, and every message
 * reads back once, intact.
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import { type AppendedBatch, assertChainAndReadBack } from "./queue-log-helpers.js";

const WORKER = fileURLToPath(new URL("../support/append-worker.ts", import.meta.url));

function runWorker(dataDir: string, topic: string, ids: number[], batchesEach: number): Promise<AppendedBatch[]> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, [dataDir, topic, ids.join(","), String(batchesEach)], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let result: AppendedBatch[] | undefined;
    child.on("message", (m) => {
      result = m as AppendedBatch[];
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 && result ? resolve(result) : reject(new Error(`append worker exited with ${code}`)),
    );
  });
}

describe("queue log across OS processes (embedded store)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "nimbus-mp-"));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it("4 processes x 5 appenders x 50 batches: disjoint, gap-free, every message once", async () => {
    const topic = "MultiProcess";
    const groups = [0, 1, 2, 3].map((p) => [0, 1, 2, 3, 4].map((i) => p * 5 + i));
    const results = await Promise.all(groups.map((ids) => runWorker(dataDir, topic, ids, 50)));
    const storage = createLocalStorage({ dataDir });
    try {
      const q = { topic, brokerName: "broker-a", queueId: 0 };
      await assertChainAndReadBack(new QueueLog(storage), q, results.flat(), 20 * 50);
    } finally {
      await storage.close();
    }
  });
});
