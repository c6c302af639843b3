/**
 * @module The fuzz's short run, in `npm test`: the batch codec and the HTTP request surface, a bounded
 * number of generated inputs each (`npm run fuzz` runs over a million).
 */
import { describe, it } from "node:test";
import { fuzzCodec } from "./codec-fuzz.js";
import { fuzzHostile } from "./hostile-fuzz.js";
import { fuzzHttp } from "./http-fuzz.js";
import { withFuzzServer } from "./server.js";

describe("fuzz (short run)", () => {
  it("batch decoder: mutated valid batches decode to what was encoded or throw DATA_CORRUPTED", (t) => {
    t.diagnostic(`${fuzzCodec({ runs: 3000 })} inputs`);
  });

  it("HTTP surface: random and mutated requests answer 2xx or a 4xx {code, message} that wrote nothing", async (t) => {
    const tally = await withFuzzServer((server) =>
      fuzzHttp({ url: server.url, counter: server.storage.counter, runs: 1500 }),
    );
    t.diagnostic(JSON.stringify(tally));
  });

  it("hostile shapes: huge arrays and maps, malformed hosts, long groups: no 5xx, small refusals, no write", async (t) => {
    const tally = await withFuzzServer((server) =>
      fuzzHostile({ url: server.url, counter: server.storage.counter, runs: 60 }),
    );
    t.diagnostic(JSON.stringify(tally));
  });
});
