/**
 * @module `npm run bench -- --suite proxy-cost`: what `nimbus proxy` costs per million 1 KiB messages sent one
 * per call by many producers at once (docs/cost.md "The gRPC endpoint"). In this process: dynalite and s3rver, a
 * local server that registers `broker-a` (the stage's brokers), and the proxy on its own storage client whose
 * every call is delayed as AWS would (aws-latency.ts: S3 PUT 30/100 ms, GET 15/60, DynamoDB 5/15 by default).
 * `--producers` (64) of RocketMQ's official Node.js clients, each its own connection and one send in flight, send
 * for `--seconds` (20) to a topic of `--queues` (8). The proxy's storage requests are counted (the local server's
 * registrations are not: another client) and priced at docs/cost.md's list prices; Amazon SQS is $0.40 per
 * million requests.
 */
import { spawn } from "node:child_process";
import { diffCounts, type RequestCounts } from "../../lib/storage/request-counter.js";
import type { AwsLatencies } from "./aws-latency.js";
import { pricePerMessage, withProxyStage } from "./proxy-stage.js";
import { percentile } from "./stats.js";

export interface ProxyCostOptions {
  producers: number;
  seconds: number;
  queues: number;
  latencies: AwsLatencies;
}

export interface ProxyCostResult {
  messages: number;
  msgPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  perMessage: RequestCounts;
  /** DynamoDB and S3 at list prices, per million messages. */
  dollarsPerMillion: number;
}

export async function runProxyCost(o: ProxyCostOptions, runId: string): Promise<ProxyCostResult> {
  return withProxyStage(o, { name: "ProxyCost", runId, remoting: false }, async ({ proxy, proxyStorage, topic }) => {
    // The producers run in a process of their own, as they would on other hosts: the proxy keeps this one.
    let before = proxyStorage.counter.snapshot();
    const load = await runLoad(proxy.grpc.endpoint, topic, o, () => {
      before = proxyStorage.counter.snapshot();
    });
    const { latencies, errors, seconds } = load;
    const messages = latencies.length;
    return {
      messages,
      msgPerSec: messages / seconds,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      errors,
      ...pricePerMessage(diffCounts(proxyStorage.counter.snapshot(), before), messages),
    };
  });
}

export function formatProxyCost(o: ProxyCostOptions, r: ProxyCostResult): string {
  const m = r.perMessage;
  const f = (n: number, d = 3) => n.toFixed(d);
  return [
    `nimbus proxy on the AWS adapters (dynalite + s3rver, injected latencies), ${o.producers} producers (RocketMQ's Node.js client, one send in flight each), ${o.queues} queues, 1 KiB, ${o.seconds} s`,
    "| messages | msg/s | p50 / p99 ms | table writes | write units | table reads | read units | S3 PUTs | S3 GETs | DynamoDB + S3 $ per million | SQS $ per million |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    `| ${r.messages} | ${Math.round(r.msgPerSec)} | ${f(r.p50Ms, 1)} / ${f(r.p99Ms, 1)} | ${f(m.tableWrites)} | ${f(m.writeUnits)} | ${f(m.tableReads)} | ${f(m.readUnits)} | ${f(m.objectPuts, 4)} | ${f(m.objectGets, 4)} | **${f(r.dollarsPerMillion)}** | 0.400 |`,
    r.errors > 0 ? `(${r.errors} sends failed)` : "",
  ].join("\n");
}

interface LoadResult {
  latencies: number[];
  errors: number;
  seconds: number;
}

/**
 * Runs proxy-cost-load.ts in a child process against `endpoint`: `warm` is called once its producers have each sent
 * one message (the measured span starts), and the answer is its sorted send latencies.
 */
function runLoad(endpoint: string, topic: string, o: ProxyCostOptions, warm: () => void): Promise<LoadResult> {
  const script = new URL("./proxy-cost-load.ts", import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    ["--import", "tsx", script, endpoint, topic, String(o.producers), String(o.seconds)],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("WARM\n") && !out.includes("GO")) {
        out = out.replace("WARM\n", "GO\n");
        warm();
        child.stdin.end("go\n");
      }
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (code !== 0 || line === undefined) reject(new Error(`the proxy-cost load exited ${code}: ${out.slice(-500)}`));
      else resolve(JSON.parse(line.slice("RESULT ".length)) as LoadResult);
    });
  });
}
