/**
 * @module Layers that hold by test: every import of lib/, functions/ and infra/ goes the allowed way
 * (test/protocol/layers.ts), capability folders are entered only through their index.ts, no import circle
 * exists between files or between folders, and a canary of each kind of wrong import is caught.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { ROOT } from "./generate.js";
import { importCycles, importsOf, pastIndexImports, wrongWayImports } from "./layers.js";

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && /\.tsx?$/.test(d.name))
    .map((d) => path.relative(ROOT, path.join(d.parentPath, d.name)).split(path.sep).join("/"));
}

function repositorySources(): { path: string; text: string }[] {
  const files = [...sourceFiles("lib"), ...sourceFiles("functions"), ...sourceFiles("infra"), "sst.config.ts"];
  assert.ok(files.length > 100, `read ${files.length} files`);
  return files.map((f) => ({ path: f, text: readFileSync(path.join(ROOT, f), "utf8") }));
}

describe("layers", () => {
  it("every import in lib/, functions/, infra/ and sst.config.ts goes the allowed way", () => {
    assert.deepEqual(wrongWayImports(repositorySources()), []);
  });

  it("a capability folder is entered only through its index.ts", () => {
    assert.deepEqual(pastIndexImports(repositorySources()), []);
  });

  it("no import circle between files, nor between capability folders", () => {
    assert.deepEqual(importCycles(repositorySources()), { files: [], folders: [] });
  });

  it("catches a circle and an import past an index", () => {
    const circle = [
      { path: "lib/http/a.ts", text: `import type { B } from "./b.js";` },
      { path: "lib/http/b.ts", text: `import { c } from "./c.js";` },
      { path: "lib/http/c.ts", text: `export { a } from "./a.js";` },
      { path: "lib/http/d.ts", text: `import { c } from "./c.js";` },
    ];
    assert.deepEqual(importCycles(circle).files, [["lib/http/a.ts", "lib/http/b.ts", "lib/http/c.ts"]]);
    const folders = [
      { path: "lib/broker/timers/index.ts", text: `export { x } from "./x.js";` },
      { path: "lib/broker/timers/x.ts", text: `import { y } from "../produce/index.js";` },
      { path: "lib/broker/produce/index.ts", text: `export { y } from "./y.js";` },
      { path: "lib/broker/produce/y.ts", text: `import { z } from "../timers/z.js";` },
      { path: "lib/broker/timers/z.ts", text: `` },
    ];
    assert.deepEqual(importCycles(folders).folders, [["lib/broker/produce", "lib/broker/timers"]]);
    assert.deepEqual(pastIndexImports(folders), [
      { file: "lib/broker/produce/y.ts", imports: "lib/broker/timers/z.ts" },
    ]);
    const past: [string, string][] = [
      ["lib/http/x.ts", `import { QueueLog } from "../broker/queue-log/queue-log.js";`],
      ["lib/broker/names/x.ts", `import { QueueLog } from "../queue-log/queue-log.js";`],
      ["functions/x.ts", `import { Broker } from "../lib/broker/broker.js";`],
      ["lib/cli/x.ts", `import { sleep } from "../client/schedule.js";`],
    ];
    for (const [file, text] of past)
      assert.equal(pastIndexImports([{ path: file, text }]).length, 1, `${file}: ${text}`);
    const fine: [string, string][] = [
      ["lib/http/x.ts", `import { QueueLog } from "../broker/queue-log/index.js";`],
      ["lib/broker/queue-log/x.ts", `import { read } from "./read.js";`],
      ["lib/broker/names/x.ts", `import { keys } from "../store/index.js";`],
      ["lib/broker/broker.ts", `import { QueueLog } from "./queue-log/index.js";`],
      ["lib/client/consumer/x.ts", `import { sleep } from "../schedule.js";`],
      ["functions/x.ts", `import { Broker } from "../lib/broker/index.js";`],
    ];
    for (const [file, text] of fine) assert.deepEqual(pastIndexImports([{ path: file, text }]), [], `${file}: ${text}`);
  });

  it("catches a canary of every rule", () => {
    const canaries: [string, string, string][] = [
      ["lib/core/x.ts", `import { Broker } from "../broker/index.js";`, "core imports nothing of ours"],
      ["lib/console/x.tsx", `import { NimbusApi } from "../client/index.js";`, "the console only core and protocol"],
      ["lib/protocol/x.ts", `import type { Storage } from "../storage/storage.js";`, "protocol imports only core"],
      ["lib/client/x.ts", `export { Broker } from "../broker/index.js";`, "the SDK only core and protocol"],
      ["lib/broker/x.ts", `import { NimbusApi } from "../client/index.js";`, "the broker never imports the SDK"],
      ["lib/broker/x.ts", `const m = await import("../storage/aws/index.js");`, "nor an adapter"],
      ["lib/broker/x.ts", `import { handler } from "../../functions/send.js";`, "nor functions/"],
      ["lib/broker/x.ts", `import type { NimbusConfig } from "../config/nimbus-config.js";`, "nor the config"],
      [
        "lib/storage/aws/x.ts",
        `import { keys } from "../../broker/store/index.js";`,
        "adapters never import the broker",
      ],
      ["lib/storage/local/x.ts", `import { x } from "../aws/index.js";`, "nor each other"],
      [
        "lib/http/x.ts",
        `import { createLocalStorage } from "../storage/local/index.js";`,
        "only wiring picks adapters",
      ],
      ["lib/grpc/x.ts", `import { createLocalStorage } from "../storage/local/index.js";`, "gRPC picks no adapter"],
      ["lib/http/x.ts", `import { startGrpcServer } from "../grpc/index.js";`, "HTTP does not import gRPC"],
      ["lib/broker/x.ts", `import { ROCKET_CODE } from "../grpc/codes.js";`, "the broker knows no protocol"],
      [
        "lib/dev/x.ts",
        `import { handler } from "../../functions/send.js";`,
        "the local server never imports functions/",
      ],
      ["functions/x.ts", `import { createLocalStorage } from "../lib/storage/local/index.js";`, "Lambda has no SQLite"],
      ["infra/x.ts", `import { BROKER_TABLES } from "../lib/broker/store/index.js";`, "infra evaluates no broker code"],
    ];
    for (const [file, text, rule] of canaries) {
      assert.equal(wrongWayImports([{ path: file, text }]).length, 1, `${rule}: ${file}: ${text}`);
    }
    assert.deepEqual(wrongWayImports([{ path: "lib/broker/x.ts", text: `import { z } from "zod";` }]), []);
  });

  it("reads multi-line, type-only and re-export specifiers", () => {
    const text = [
      `import {`,
      `  a,`,
      `  type B,`,
      `} from "./a.js";`,
      `import type { C } from '../c.js';`,
      `export * from "./d.js";`,
      `import "node:fs";`,
      `const e = await import("./e.js");`,
    ].join("\n");
    assert.deepEqual(importsOf(text), ["./a.js", "../c.js", "./d.js", "./e.js"]);
  });
});
