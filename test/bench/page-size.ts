/**
 * @module The embedded store's page size, in process: `npx tsx test/bench/page-size.ts [appends] [rounds]` appends
 * 1 KiB messages one at a time over 4 queues through `QueueLog` on `createLocalStorage`, on a store whose database
 * file was made with 4 KiB pages (as SQLite's default made them) and on one made with 8 KiB pages (as a new store is
 * now), alternating, and prints the process's CPU (its checkpoint thread included) and wall time per append. The
 * database file is made before the store opens it; the store keeps a file's page size.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import { QueueLog } from "../../lib/broker/queue-log/queue-log.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import { makeStoreFile } from "../support/local-fixture.js";
import { storeProbeMessage } from "./store-message.js";

const appends = Number(process.argv[2] ?? 16_000);
const rounds = Number(process.argv[3] ?? 2);
const message = storeProbeMessage;

async function run(pageBytes: number): Promise<{ cpuUs: number; wallUs: number }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-page-size-"));
  try {
    makeStoreFile(dataDir, pageBytes);
    const storage = createLocalStorage({ dataDir });
    const log = new QueueLog(storage);
    const queues: QueueRef[] = [0, 1, 2, 3].map((queueId) => ({ topic: "PageSize", brokerName: "broker-a", queueId }));
    for (const q of queues) await log.append(q, [message(-1)]); // counters made, statements prepared
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < appends; i++) await log.append(queues[i % 4] as QueueRef, [message(i)]);
    const wallUs = ((performance.now() - t0) * 1000) / appends;
    const cpu = process.cpuUsage(cpu0);
    await storage.close();
    return { cpuUs: (cpu.user + cpu.system) / appends, wallUs };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`${appends} appends of 1 KiB, one at a time over 4 queues, ${rounds} rounds; load ${os.loadavg()[0]}`);
for (let round = 1; round <= rounds; round++) {
  for (const pageBytes of round % 2 === 1 ? [4096, 8192] : [8192, 4096]) {
    const { cpuUs, wallUs } = await run(pageBytes);
    console.log(
      `round ${round}, ${pageBytes / 1024} KiB pages: ${cpuUs.toFixed(1)} µs CPU, ${wallUs.toFixed(1)} µs wall per append`,
    );
  }
}
console.log(`load ${os.loadavg()[0]}`);
