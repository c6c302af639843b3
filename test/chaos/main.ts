/**
 * @module `npm run chaos`: the long chaos run on both storage modes, printing the figures that
 * docs/reliability.md quotes. Options: `--messages N` (per mode, default 12000), `--producers N` (default 8),
 * `--mode local|aws|both`. Exits 1 when an acked message was lost, an offset assigned twice, or a range
 * unreadable.
 */
import { parseArgs } from "node:util";
import { type ChaosOptions, type ChaosReport, runAwsChaos, runLocalChaos } from "./chaos.js";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "12000" },
    producers: { type: "string", default: "8" },
    mode: { type: "string", default: "both" },
  },
});
const options: ChaosOptions = {
  messages: Number(values.messages),
  producers: Number(values.producers),
  queues: 4,
  faultRate: 0.02,
  killRate: 0.05,
  serverKills: 6,
};
const reports: ChaosReport[] = [];
const started = performance.now();
if (values.mode !== "aws") reports.push(await runLocalChaos(options));
if (values.mode !== "local") reports.push(await runAwsChaos(options));
for (const report of reports) console.log(JSON.stringify(report, null, 2));
console.log(`chaos: ${((performance.now() - started) / 1000).toFixed(0)} s`);
const broken = reports.some(
  (r) =>
    r.lost + r.doubleAssigned + r.gaps + r.orphanObjectsLeft * Number(r.mode === "local") + r.tempFilesLeft > 0 ||
    r.acked !== r.messages,
);
process.exit(broken ? 1 : 0);
