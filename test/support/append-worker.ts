/**
 * @module A separate OS process that appends to a queue of a shared embedded store, for the
 * multi-process run of the chain-rule test. Reads its job from argv, answers the appended batches via IPC.
 */
import { createLocalStorage } from "../../lib/storage/local/index.js";
import { appendConcurrently } from "../contract/queue-log-helpers.js";

const [dataDir, topic, ids, batchesEach] = process.argv.slice(2);
if (!dataDir || !topic || !ids || !batchesEach) throw new Error("usage: append-worker DIR TOPIC IDS BATCHES");
const appenderIds = ids.split(",").map(Number);
const storage = createLocalStorage({ dataDir });
const q = { topic, brokerName: "broker-a", queueId: 0 };
const batches = await appendConcurrently([storage], q, {
  appenders: appenderIds.length,
  batchesEach: Number(batchesEach),
  appenderIds,
});
await storage.close();
process.send?.(batches, () => process.exit(0));
