/**
 * @module A child process of `local-multiprocess.test.ts`: opens the embedded store on the data folder
 * given as argv[2], says "ready", and on "go" claims argv[3] slots of one partition as writer argv[4]:
 * it walks the sort keys 0, 1, 2, ... with conditional puts (`{ exists: false }`) until it has won that
 * many, then sends back the slots it won and, for each slot it lost, the writer the failed put found there.
 */
import { createLocalStorage } from "../../lib/storage/local/index.js";
import { type AttrValue, ConditionFailedError } from "../../lib/storage/table.js";

const [dataDir, count, writer] = process.argv.slice(2);
if (!dataDir || !count || !writer || !process.send) {
  throw new Error("usage: fork(local-claim-worker.ts, [dataDir, count, writer])");
}
const send = process.send.bind(process);
const storage = createLocalStorage({ dataDir });
const table = storage.table({ name: "multiprocess", sortKeyType: "number" });

process.on("message", async (message) => {
  if (message !== "go") return;
  const won: number[] = [];
  const lost: { sk: number; holder: AttrValue | undefined }[] = [];
  for (let sk = 0; won.length < Number(count); sk++) {
    try {
      await table.put({ pk: "slots", sk, writer }, { condition: { exists: false }, returnExistingOnFailure: true });
      won.push(sk);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      lost.push({ sk, holder: err.existing?.writer });
    }
  }
  await storage.close();
  send({ won, lost }, () => process.disconnect());
});
send("ready");
