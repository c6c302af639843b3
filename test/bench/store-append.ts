/**
 * @module The embedded store's write and read path, in process: `npx tsx test/bench/store-append.ts [--appends N]
 * [--in-flight N] [--queues N] [--flush async|sync] [--root DIR]` appends 1 KiB messages, one per append, through
 * `QueueLog` on `createLocalStorage` (`--in-flight` at once over `--queues` queues, so that the group commit merges
 * what arrives together), after 2,000 appends to warm up; then reads every queue from its start in pulls of 32, twice,
 * and prints the process's CPU (its checkpoint thread included) per append and per message read (the second pass).
 * `--root` runs the code of another working tree (`git worktree add /tmp/before <commit>`, its node_modules linked),
 * so that two versions can be run alternately on the same machine. See docs/queue-log.md ("On the embedded store").
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import { storeProbeMessage } from "./store-message.js";

const { values } = parseArgs({
  options: {
    appends: { type: "string", default: "40000" },
    "in-flight": { type: "string", default: "16" },
    queues: { type: "string", default: "8" },
    flush: { type: "string", default: "async" },
    root: { type: "string", default: path.resolve(import.meta.dirname, "../..") },
  },
});
const appends = Number(values.appends);
const inFlight = Number(values["in-flight"]);
const queueCount = Number(values.queues);
const flush = values.flush === "sync" ? "sync" : "async";
const root = path.resolve(values.root);

const { QueueLog } = (await import(
  path.join(root, "lib/broker/queue-log/queue-log.ts")
)) as typeof import("../../lib/broker/queue-log/queue-log.js");
const { createLocalStorage } = (await import(
  path.join(root, "lib/storage/local/index.ts")
)) as typeof import("../../lib/storage/local/index.js");

const message = storeProbeMessage;
const cpuUs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-store-append-"));
try {
  const storage = createLocalStorage({ dataDir, flush });
  const log = new QueueLog(storage);
  const queues: QueueRef[] = Array.from({ length: queueCount }, (_, queueId) => ({
    topic: "StoreAppend",
    brokerName: "broker-a",
    queueId,
  }));
  const queueOf = (i: number) => queues[i % queueCount] as QueueRef;
  for (let i = 0; i < 2000; i++) await log.append(queueOf(i), [message(i)]);
  const appendStart = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < appends) {
        const i = next++;
        await log.append(queueOf(i), [message(i)]);
      }
    }),
  );
  const appendUs = cpuUs(appendStart) / appends;
  let readUs = 0;
  let read = 0;
  for (let pass = 0; pass < 2; pass++) {
    const readStart = process.cpuUsage();
    read = 0;
    for (const q of queues) {
      for (let offset = 0; ; ) {
        const r = await log.read(q, offset, { maxMessages: 32 });
        if (r.messages.length === 0) break;
        read += r.messages.length;
        offset = r.nextBeginOffset;
      }
    }
    readUs = cpuUs(readStart) / read;
  }
  await storage.close();
  console.log(
    `${root}: ${appends} appends (${inFlight} in flight over ${queueCount} queues, --flush ${flush}): ` +
      `${appendUs.toFixed(1)} µs CPU per append; ${read} read: ${readUs.toFixed(1)} µs per message; ` +
      `load ${os.loadavg()[0]?.toFixed(1)}`,
  );
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
