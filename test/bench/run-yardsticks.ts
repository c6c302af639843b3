/**
 * @module The suites of `npm run bench` that set Nimbus beside something else (run.ts dispatches to them):
 * `rocketmq` (Apache RocketMQ with RocketMQ's own clients, rocketmq-suite.ts), `proxy-cost` (the gRPC proxy's AWS
 * cost against SQS, proxy-cost.ts; its remoting door's with `--protocol remoting`, proxy-cost-remoting.ts) and `plain-http` (stock HTTP clients, plain-http.ts).
 */
import { loadavg } from "node:os";
import type { AwsLatencies } from "./aws-latency.js";
import { positive, wholeNumber } from "./bench-flags.js";
import { formatPlainHttp, isPlainClient, type PlainClient, runPlainHttp } from "./plain-http.js";
import { formatProxyCost, runProxyCost } from "./proxy-cost.js";
import { formatProxyCostRemoting, runProxyCostRemoting } from "./proxy-cost-remoting.js";
import { formatRocketMQ, runRocketMQSuite } from "./rocketmq-suite.js";

/** The command line's flags these suites read (run.ts's parseArgs values). */
export interface YardstickFlags {
  quick: boolean;
  "max-messages"?: string | undefined;
  rounds?: string | undefined;
  queues?: string | undefined;
  phases: string;
  workers?: string | undefined;
  /** The rocketmq suite: start each phase at once, without waiting for the client's JIT compilers to be idle. */
  "no-jit-settle"?: boolean | undefined;
  /** The rocketmq suite: messages of each phase's shape sent (or consumed) unmeasured before it. */
  warmup?: string | undefined;
  brokers: string;
  protocols: string;
  /** proxy-cost's client: gRPC (RocketMQ 5's Node.js client) or remoting (the 4.9.8 Java client). */
  protocol: string;
  rate?: string | undefined;
  seconds?: string | undefined;
  "plain-clients": string;
  flush?: string | undefined;
  factor?: string | undefined;
  "overload-client": string;
  "go-pool": string;
  auth?: boolean | undefined;
  producers?: string | undefined;
}

export interface YardstickContext {
  machine: object;
  runId: string;
  latencies: AwsLatencies;
}

/** Runs one of these suites and prints its table and its `BENCH_JSON` line. */
export async function runYardstickSuite(
  suite: "rocketmq" | "plain-http" | "proxy-cost",
  flags: YardstickFlags,
  context: YardstickContext,
): Promise<void> {
  if (suite === "rocketmq") {
    const options = {
      messages: Math.floor(positive("max-messages", flags["max-messages"], flags.quick ? 2000 : 20_000)),
      rounds: Math.floor(positive("rounds", flags.rounds, flags.quick ? 1 : 2)),
      bodyBytes: 1024,
      queues: Math.floor(positive("queues", flags.queues, 4)),
      phases: flags.phases.split(",") as ("sync" | "async" | "consume")[],
      workers: flags.workers === undefined ? undefined : Math.floor(positive("workers", flags.workers, 1)),
      flush: flags.flush === "sync" ? ("sync" as const) : ("async" as const),
      brokers: flags.brokers.split(",") as ("rocketmq" | "nimbus")[],
      clients: flags.protocols.split(",") as ("grpc" | "remoting")[],
      jitSettle: flags["no-jit-settle"] !== true,
      warmup: wholeNumber("warmup", flags.warmup, flags.quick ? 0 : 5000),
    };
    if (!options.clients.every((c) => c === "grpc" || c === "remoting"))
      throw new Error(`--protocols is a list of grpc and remoting, got ${flags.protocols}`);
    if (!options.brokers.every((b) => b === "rocketmq" || b === "nimbus"))
      throw new Error(`--brokers is a list of rocketmq and nimbus, got ${flags.brokers}`);
    if (!options.phases.every((p) => ["sync", "async", "consume"].includes(p)))
      throw new Error(`--phases is a list of sync, async and consume, got ${flags.phases}`);
    console.error(`bench rocketmq: ${JSON.stringify({ ...options, machine: context.machine, load: loadavg() })}`);
    const runs = await runRocketMQSuite(options);
    console.log(formatRocketMQ(runs));
    console.log(
      `BENCH_JSON ${JSON.stringify({ suite: "rocketmq", options, machine: context.machine, load: loadavg(), runs })}`,
    );
    return;
  }
  if (suite === "plain-http") {
    const asked = flags["overload-client"];
    if (asked !== "fetch" && asked !== "go") throw new Error(`--overload-client is fetch or go, got ${asked}`);
    const overloadClient: "fetch" | "go" = asked;
    const options = {
      rate: positive("rate", flags.rate, 2000),
      seconds: positive("seconds", flags.seconds, flags.quick ? 3 : 10),
      clients: flags["plain-clients"].split(",") as PlainClient[],
      flush: flags.flush === "sync" ? ("sync" as const) : ("async" as const),
      auth: flags.auth === true,
      factor: flags.factor === "0" ? 0 : positive("factor", flags.factor, 2),
      workers: flags.workers === undefined ? undefined : Math.floor(positive("workers", flags.workers, 1)),
      overloadClient,
      goPool: flags["go-pool"] === "0" ? 0 : Math.floor(positive("go-pool", flags["go-pool"], 0)),
    };
    if (!options.clients.every(isPlainClient))
      throw new Error(`--plain-clients is a list of fetch, urllib and go, got ${flags["plain-clients"]}`);
    if (options.auth && options.factor > 0 && options.overloadClient !== "fetch")
      throw new Error("--auth signs the fetch client's requests only: the overload row needs --overload-client fetch");
    const started = { date: new Date().toISOString(), load: loadavg() };
    const rows = await runPlainHttp(options);
    console.log(formatPlainHttp(options, rows));
    console.log(
      `BENCH_JSON ${JSON.stringify({ suite: "plain-http", options, machine: context.machine, started, rows })}`,
    );
    return;
  }
  if (suite === "proxy-cost") {
    const options = {
      producers: Math.floor(positive("producers", flags.producers, 64)),
      seconds: positive("seconds", flags.seconds, flags.quick ? 5 : 20),
      queues: Math.floor(positive("queues", flags.queues, 8)),
      latencies: context.latencies,
    };
    const started = { date: new Date().toISOString(), load: loadavg() };
    if (flags.protocol !== "grpc" && flags.protocol !== "remoting")
      throw new Error(`--protocol is grpc or remoting, got ${flags.protocol}`);
    if (flags.protocol === "remoting") {
      const phases = await runProxyCostRemoting(options, context.runId);
      console.log(formatProxyCostRemoting(options, phases));
      const json = { suite: "proxy-cost", protocol: "remoting", options, machine: context.machine, started, phases };
      console.log(`BENCH_JSON ${JSON.stringify(json)}`);
      return;
    }
    const result = await runProxyCost(options, context.runId);
    console.log(formatProxyCost(options, result));
    console.log(
      `BENCH_JSON ${JSON.stringify({ suite: "proxy-cost", options, machine: context.machine, started, result })}`,
    );
    return;
  }
}
