/**
 * @module The fuzz's short run, in `npm test`: the batch codec and the HTTP request surface, a bounded
 * number of generated inputs each (`npm run fuzz` runs over a million).
 */
import { describe, it } from "node:test";
import { fuzzCodec } from "./codec-fuzz.js";
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
});
