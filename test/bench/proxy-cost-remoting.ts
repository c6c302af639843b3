/**
 * @module `npm run bench -- --suite proxy-cost --protocol remoting`: what `nimbus proxy --remoting-port` costs in
 * AWS requests per 1 KiB message for RocketMQ 4.x clients (docs/cost.md, docs/remoting.md). As the gRPC suite
 * (proxy-cost.ts): dynalite and s3rver, a local server registering the stage's brokers (the topic's queues on `broker-a`), the
 * proxy on its own storage client with AWS's latencies injected; then the classic client 4.9.8
 * (test/bench/rocketmq/remoting-client, ProxyCostBench.java) in a JVM of its own: sync sends (one at a time) for
 * `--seconds`, async sends (`--producers` in flight on one producer) for `--seconds`, then a push consumer reading
 * every message back. Each phase's storage requests are counted alone (the JVM waits for a line on stdin before
 * each phase) and priced at docs/cost.md's list prices.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { diffCounts, type RequestCounts } from "../../lib/storage/request-counter.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { ProxyCostOptions } from "./proxy-cost.js";
import { pricePerMessage, withProxyStage } from "./proxy-stage.js";
import { buildModule, classPath } from "./rocketmq-process.js";

export interface RemotingPhaseCost {
  phase: "sync" | "async" | "consume";
  messages: number;
  msgPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  perMessage: RequestCounts;
  dollarsPerMillion: number;
}

export async function runProxyCostRemoting(o: ProxyCostOptions, runId: string): Promise<RemotingPhaseCost[]> {
  // As the gRPC suite's stage: `--queues` queues on broker-a, the proxy serving the remoting door too.
  return withProxyStage(o, { name: "ProxyCostR", runId, remoting: true }, ({ proxy, proxyStorage, topic }) =>
    runClient(proxy.remoting?.nameServerAddress ?? "", topic, topic, o, proxyStorage),
  );
}

/** Runs ProxyCostBench.java: at each `READY <phase>` a snapshot, at each `RESULT` the phase's requests. */
async function runClient(
  namesrv: string,
  topic: string,
  group: string,
  o: ProxyCostOptions,
  storage: Storage,
): Promise<RemotingPhaseCost[]> {
  const cp = classPath(buildModule("remoting-client"));
  const home = mkdtempSync(path.join(os.tmpdir(), "nimbus-proxy-cost-"));
  const args = ["-Xmx512m", `-Duser.home=${home}`, `-Drocketmq.client.logRoot=${home}`, "-cp", cp];
  const main = ["nimbus.bench.ProxyCostBench", namesrv, topic, group, `${o.seconds}`, "1024", `${o.producers}`];
  const child = spawn("java", [...args, ...main], { stdio: ["pipe", "pipe", "pipe"] });
  const phases: RemotingPhaseCost[] = [];
  let before = storage.counter.snapshot();
  let partial = "";
  let err = "";
  child.stderr.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-4000);
  });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith("READY ")) {
        before = storage.counter.snapshot();
        child.stdin.write("go\n");
      } else if (line.startsWith("RESULT ")) {
        const used = diffCounts(storage.counter.snapshot(), before);
        const [, phase = "", n = "0", seconds = "0", p50 = "0", p99 = "0", errors = "0"] = line.trim().split(/\s+/);
        const messages = Number(n);
        phases.push({
          phase: phase as RemotingPhaseCost["phase"],
          messages,
          msgPerSec: messages / Number(seconds),
          p50Ms: Number(p50),
          p99Ms: Number(p99),
          errors: Number(errors),
          ...pricePerMessage(used, messages),
        });
      }
    }
  });
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", resolve);
    });
    if (code !== 0) throw new Error(`the proxy-cost remoting client exited (${code}): ${err}`);
    return phases;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export function formatProxyCostRemoting(o: ProxyCostOptions, phases: RemotingPhaseCost[]): string {
  const f = (n: number, d = 3) => n.toFixed(d);
  return [
    `nimbus proxy --remoting-port on the AWS adapters (dynalite + s3rver, injected latencies), RocketMQ's remoting client 4.9.8: sync sends one at a time and async sends ${o.producers} in flight for ${o.seconds} s each, then a push consumer reads them all; ${o.queues} queues, 1 KiB`,
    "| phase | messages | msg/s | p50 / p99 ms | table writes | write units | table reads | read units | S3 PUTs | S3 GETs | DynamoDB + S3 $ per million |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...phases.map((r) => {
      const m = r.perMessage;
      return `| ${r.phase} | ${r.messages} | ${Math.round(r.msgPerSec)} | ${f(r.p50Ms, 1)} / ${f(r.p99Ms, 1)} | ${f(m.tableWrites)} | ${f(m.writeUnits)} | ${f(m.tableReads)} | ${f(m.readUnits)} | ${f(m.objectPuts, 4)} | ${f(m.objectGets, 4)} | **${f(r.dollarsPerMillion)}** |`;
    }),
    phases.some((r) => r.errors > 0) ? `(errors: ${phases.map((r) => `${r.phase} ${r.errors}`).join(", ")})` : "",
  ].join("\n");
}
