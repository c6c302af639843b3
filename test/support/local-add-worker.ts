/**
 * @module A child process of `local-multiprocess.test.ts`: opens the embedded store on the data folder
 * given as argv[2], says "ready", and on "go" runs argv[3] conditional `add`s on one item, then sends
 * back the value each add returned.
 */
import { createLocalStorage } from "../../lib/storage/local/index.js";

const [dataDir, count] = process.argv.slice(2);
if (!dataDir || !count || !process.send) throw new Error("usage: fork(local-add-worker.ts, [dataDir, count])");
const send = process.send.bind(process);
const storage = createLocalStorage({ dataDir });
const table = storage.table({ name: "multiprocess", sortKeyType: "number" });

process.on("message", async (message) => {
  if (message !== "go") return;
  const seen: number[] = [];
  for (let i = 0; i < Number(count); i++) {
    const item = await table.update(
      { pk: "counter", sk: 0 },
      { add: { n: 1 } },
      { condition: { absentOrLessThan: ["n", 1_000_000] } },
    );
    seen.push(Number(item.n));
  }
  await storage.close();
  send({ seen }, () => process.disconnect());
});
send("ready");
