import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { latestMapEntries } from "../bench/perf-record.js";
import { formatPerfByPart, jsFrame, parsePerfScript, perfByPart, samplePart } from "../bench/perf-samples.js";

/** `perf script -F comm,pid,tid,ip,sym,dso` as it prints a `perf record -g` of `nimbus dev --perf-basic-prof`. */
const SCRIPT = `node 100/100 
\t          14b5c5 sqlite3_step (/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node)
\t    7f8894130222 JS:^sqliteTransaction /app/node_modules/better-sqlite3/lib/methods/transaction.js:52:131 (/tmp/perf-100.map)
\t    7f889424e255 JS:*#flush file:///app/lib/storage/local/write-batcher.ts:1:1277 (/tmp/perf-100.map)

node 100/100 
\tffffffff81bcf81c iowrite16 ([kernel.kallsyms])
\t          108cae __write (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          93607f node::StreamBase::WriteBuffer (/usr/bin/node)
\t    7f889423b070 JS:*writeGeneric node:internal/stream_base_commons:148:22 (/tmp/perf-100.map)
\t    7f889423b071 JS:*#write file:///app/lib/remoting/connection.ts:1:5925 (/tmp/perf-100.map)

node 100/100 
\t          d37cef Builtins_LoadIC (/usr/bin/node)
\t    7f8894279f32 JS:*encodeStoredMessages file:///app/lib/remoting/wire-message.ts:1:3464 (/tmp/perf-100.map)
\t    7f8894276a19 JS:*read file:///app/lib/broker/queue-log/read.ts:1:1863 (/tmp/perf-100.map)

node 100/100 
\t          d9dfb2 v8::internal::ScavengerCollector::CollectGarbage (/usr/bin/node)
\t          cf4aed v8::internal::Heap::Scavenge (/usr/bin/node)
\t          d12e9c v8::internal::Heap::CollectGarbage (/usr/bin/node)
\t    7f8894276a19 JS:*read file:///app/lib/broker/queue-log/read.ts:1:1863 (/tmp/perf-100.map)

node 100/100 
\tffffffff8175837e do_epoll_wait ([kernel.kallsyms])
\t          14c05fb uv__io_poll (/usr/bin/node)
\t          14ac8a7 uv_run (/usr/bin/node)

node 100/100 
\t    7f889424e255 JS:^ :3:17 (/tmp/perf-100.map)

node 100/104 
\t          9d0000 v8::internal::compiler::PipelineImpl::OptimizeGraph (/usr/bin/node)
\t          9d0001 v8::internal::OptimizingCompileDispatcher::CompileTask::RunInternal (/usr/bin/node)

node 100/105 
\t          13a94b sqlite3WalCheckpoint (/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node)
\t    7f7e3401e5e1 JS:^checkpoint [worker eval]:7:20 (/tmp/perf-100.map)

node 200/200 
\t    7f0000000001 JS:*handle file:///app/lib/grpc/door.ts:1:10 (/tmp/perf-200.map)
`;

describe("perf samples (npm run bench:profile -- --sampler perf)", () => {
  const samples = parsePerfScript(SCRIPT);

  it("reads each sample's process, thread and stack, innermost first", () => {
    assert.equal(samples.length, 9);
    assert.deepEqual(
      samples.map((s) => `${s.pid}/${s.tid}`),
      ["100/100", "100/100", "100/100", "100/100", "100/100", "100/100", "100/104", "100/105", "200/200"],
    );
    assert.deepEqual(samples[0]?.frames[0], {
      symbol: "sqlite3_step",
      dso: "/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node",
    });
    assert.equal(samples[1]?.frames.length, 5);
  });

  it("names JavaScript frames from the map file only", () => {
    assert.deepEqual(
      jsFrame({ symbol: "JS:*#write file:///app/lib/remoting/connection.ts:1:5925", dso: "/tmp/perf-1.map" }),
      {
        functionName: "#write",
        url: "file:///app/lib/remoting/connection.ts",
      },
    );
    assert.deepEqual(jsFrame({ symbol: "JS:*get size file:///app/lib/core/ring.ts:1:20", dso: "/tmp/perf-1.map" }), {
      functionName: "get size",
      url: "file:///app/lib/core/ring.ts",
    });
    assert.deepEqual(jsFrame({ symbol: "JS:^ :3:17", dso: "/tmp/perf-1.map" }), { functionName: "", url: "" });
    assert.equal(jsFrame({ symbol: "JS:*x file:///a.ts:1:1", dso: "/usr/bin/node" }), undefined);
    assert.equal(jsFrame({ symbol: "Builtins_LoadIC", dso: "/tmp/perf-1.map" }), undefined);
  });

  it("charges a main-thread sample to its innermost JavaScript, garbage collection and SQLite to their own parts", () => {
    assert.deepEqual(samples.slice(0, 6).map(samplePart), [
      "store (lib/storage, SQLite, AWS SDK)",
      // the socket write's system call: Node's stream code called it
      "Node runtime (net, streams, timers, crypto)",
      // V8's builtin, called by the door's encoder
      "remoting door (lib/remoting)",
      // triggered in the broker's read, counted as the collector's
      "garbage collection",
      // no JavaScript on the stack: the event loop
      "Node runtime (net, streams, timers, crypto)",
      // a script with no URL: as V8's own sampler counts it
      "Node runtime (net, streams, timers, crypto)",
    ]);
    assert.equal(samplePart(samples[8] ?? { pid: 0, tid: 0, atUs: undefined, frames: [] }), "gRPC door (lib/grpc)");
  });

  it("counts µs by part for main threads (every process's), by kind for the others, and the kernel's share", () => {
    const result = perfByPart(samples, 1000);
    assert.equal(result.parts.get("store (lib/storage, SQLite, AWS SDK)"), 1000);
    assert.equal(result.parts.get("Node runtime (net, streams, timers, crypto)"), 3000);
    assert.equal(result.parts.get("gRPC door (lib/grpc)"), 1000);
    assert.deepEqual([...result.helpers.entries()].sort(), [
      ["SQLite (the WAL checkpoint thread)", 1000],
      ["V8's optimizing compiler", 1000],
    ]);
    assert.equal(result.kernel, 2000);
    assert.deepEqual(result.top[0], ["sqlite3_step (better_sqlite3.node)", 1000]);
    assert.ok(result.top.some(([where]) => where === "(anonymous)"));
    const report = formatPerfByPart(result, 4, 3);
    assert.match(report, /main threads 1750\.0 µs per message \(in the kernel 500\.0\), other threads 500\.0/);
    assert.match(report, /\| remoting door \(lib\/remoting\) \| 250\.0 \| 14\.3 % \|/);
    assert.equal(report.split("\n").filter((l) => l.startsWith("| `")).length, 3);
  });
});

describe("perf samples with their times (perf record -k mono, perf script -F ...,time,...)", () => {
  const TIMED = [
    "node 100/100 34463.304514: ",
    "\t    7f0000000001 JS:*pull file:///app/lib/remoting/pull.ts:1:10 (/tmp/perf-100.map)",
    "",
    "node 100/100 34463.881228: ",
    "\t    7f0000000002 JS:*read file:///app/lib/broker/queue-log/read.ts:1:10 (/tmp/perf-100.map)",
    "",
    "node 100/101 34463.900000: ",
    "\t          9d0000 v8::internal::compiler::PipelineImpl::OptimizeGraph (/usr/bin/node)",
    "",
  ].join("\n");

  it("reads each sample's time in µs of the monotonic clock", () => {
    assert.deepEqual(
      parsePerfScript(TIMED).map((s) => s.atUs),
      [34_463_304_514, 34_463_881_228, 34_463_900_000],
    );
  });

  it("counts only the samples within the window, main threads and helpers alike", () => {
    const samples = parsePerfScript(TIMED);
    const result = perfByPart(samples, 1000, { fromUs: 34_463_800_000, toUs: 34_463_950_000 });
    assert.equal(result.samples, 2);
    assert.deepEqual([...result.parts.entries()], [["broker services (lib/broker)", 1000]]);
    assert.deepEqual([...result.helpers.entries()], [["V8's optimizing compiler", 1000]]);
    // Samples without a time are outside any window.
    assert.equal(perfByPart(parsePerfScript(SCRIPT), 1000, { fromUs: 0, toUs: Number.MAX_SAFE_INTEGER }).samples, 0);
    assert.equal(perfByPart(samples, 1000).samples, 3);
  });
});

describe("latestMapEntries", () => {
  it("drops an entry that any later one overlaps, kept or not", () => {
    // E, then N over E, then M over N's start only: N is dropped for M, and E for N, though M misses E.
    const map = ["10 40 JS:*e file:///e.ts:1:1", "5 5f JS:*n file:///n.ts:1:1", "0 a JS:*m file:///m.ts:1:1"].join(
      "\n",
    );
    assert.deepEqual(latestMapEntries(map).trim().split("\n"), ["0 a JS:*m file:///m.ts:1:1"]);
  });

  it("keeps the newest of overlapping entries and every entry that overlaps none", () => {
    const map = [
      "1000 100 JS:*old file:///a.ts:1:1", // freed, its space reused by `new` below
      "2000 10 JS:*alone file:///b.ts:1:1",
      "1000 80 JS:*new file:///c.ts:1:1",
      "1050 100 JS:*newer file:///d.ts:1:1", // overlaps `new`'s end: newer still
      "3000 10 Builtin:x",
    ].join("\n");
    assert.deepEqual(latestMapEntries(map).trim().split("\n"), [
      "1050 100 JS:*newer file:///d.ts:1:1",
      "2000 10 JS:*alone file:///b.ts:1:1",
      "3000 10 Builtin:x",
    ]);
  });
});
