/**
 * @module `npm run fuzz`: the long fuzz run. `--codec N` inputs per codec property (3 properties, default
 * 350000: over a million), `--http N` requests (default 100000), `--hostile N` hostile shapes (default 2000), `--seed S` to replay a run.
 */
import { parseArgs } from "node:util";
import { fuzzCodec } from "./codec-fuzz.js";
import { fuzzHostile } from "./hostile-fuzz.js";
import { fuzzHttp } from "./http-fuzz.js";
import { withFuzzServer } from "./server.js";

const { values } = parseArgs({
  options: {
    codec: { type: "string", default: "350000" },
    http: { type: "string", default: "100000" },
    hostile: { type: "string", default: "2000" },
    seed: { type: "string" },
  },
});
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
console.log(`fuzz: seed ${seed}`);
let started = performance.now();
const codecInputs = fuzzCodec({ runs: Number(values.codec), seed });
console.log(`codec: ${codecInputs} inputs, no failure, ${((performance.now() - started) / 1000).toFixed(0)} s`);
started = performance.now();
const tally = await withFuzzServer((server) =>
  fuzzHttp({ url: server.url, counter: server.storage.counter, runs: Number(values.http), seed }),
);
console.log(
  `http: ${tally.ok + tally.refused} requests (${tally.ok} 2xx, ${tally.refused} 4xx), no failure, ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
started = performance.now();
const hostile = await withFuzzServer((server) =>
  fuzzHostile({ url: server.url, counter: server.storage.counter, runs: Number(values.hostile), seed }),
);
console.log(
  `hostile: ${hostile.ok + hostile.refused} requests (${hostile.refused} refused), no failure, ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
console.log(`total: ${codecInputs + tally.ok + tally.refused + hostile.ok + hostile.refused} generated inputs`);
