/**
 * @module The bundles run as Lambda runs them: every handler infra/ names is bundled as `sst deploy`
 * bundles it (lambda-bundle.ts), copied alone into a fresh folder outside the repository (no `node_modules`
 * there or above it), and run in a fresh Node process by lambda-runner.mjs through lambda-local: the
 * environment infra/functions.ts gives a function (tables, bucket, stage config, ACL auth with the root
 * user), its AWS endpoints pointed at dynalite + s3rver, then API Gateway HTTP API (2.0) events, the
 * WebSocket API's events or EventBridge's scheduled event, each with a Lambda context. The README's tour goes
 * through the bundles, one process each, in order: register the brokers, create a topic, read its route, send,
 * pull, commit and read the group's progress, heartbeat, a transaction, users, the push channel, a subscription,
 * the schedules (subscription delivery's too).
 * Each bundle's size and Init time are printed (docs/deploy.md quotes them); nothing is asserted on time.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ALL_FUNCTIONS } from "../../infra/manifest.js";
import { BROKER_TABLES } from "../../lib/broker/store/tables.js";
import { stageSettings } from "../../lib/config/stages.js";
import { signNimbusRequest } from "../../lib/core/request-signing.js";
import { ensureBucket, ensureTables } from "../../lib/storage/aws/index.js";
import { apiGatewayEvent } from "../support/api-gateway-event.js";
import { EMULATOR_CREDENTIALS, type Emulators, emulatorStorageOptions, startEmulators } from "../support/emulators.js";
import { handlersNamedInInfra, ROOT } from "./infra-source.js";
import { bundleLikeSst } from "./lambda-bundle.js";

const ROOT_USER = { accessKey: "root", secretKey: "root-password-1" };
const API_HOST = "api.test";
const CHANNEL_HOST = "channel.test";
/** A bundle's process is killed past this (a hung one would otherwise hold the suite); a guard, not a speed requirement. */
const PROCESS_LIMIT_MS = 300_000;
const text = (s: string): string => Buffer.from(s).toString("base64");

interface Invocation {
  name: string;
  ms: number;
  result?: unknown;
  error?: string;
}
interface RunResult {
  initMs: number;
  invocations: Invocation[];
}

/** A signed request of the root user, as API Gateway's HTTP API hands it to the function. */
function api(method: string, url: string, body?: unknown) {
  const headers = signNimbusRequest({
    method,
    url: `https://${API_HOST}${url}`,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: ROOT_USER,
  });
  return {
    name: `${method} ${url.split("?")[0]}`,
    event: apiGatewayEvent(method, url, body, { host: API_HOST, headers }),
  };
}

/** An event of the WebSocket API: `$connect` carries the upgrade request's signed headers. */
function ws(routeKey: string, body?: string) {
  const now = Date.now();
  const requestContext = {
    routeKey,
    connectionId: "bundle-conn-1",
    eventType: routeKey === "$connect" ? "CONNECT" : routeKey === "$disconnect" ? "DISCONNECT" : "MESSAGE",
    stage: "prod",
    domainName: CHANNEL_HOST,
    apiId: "channel",
    requestId: `ws-${now}`,
    connectedAt: now,
    requestTimeEpoch: now,
  };
  const headers =
    routeKey === "$connect"
      ? {
          host: CHANNEL_HOST,
          ...signNimbusRequest({ method: "GET", url: `https://${CHANNEL_HOST}/prod`, credentials: ROOT_USER }),
        }
      : undefined;
  return {
    name: `ws ${routeKey}`,
    event: { requestContext, ...(headers ? { headers } : {}), ...(body ? { body } : {}) },
  };
}

/** EventBridge's event for a schedule rule. */
function scheduled(rule: string) {
  return {
    name: `schedule ${rule}`,
    event: {
      version: "0",
      id: `sched-${Date.now()}`,
      "detail-type": "Scheduled Event",
      source: "aws.events",
      account: "123456789012",
      time: new Date().toISOString(),
      region: "us-east-1",
      resources: [`arn:aws:events:us-east-1:123456789012:rule/${rule}`],
      detail: {},
    },
  };
}

const TOPIC = "BundleTour";
const GROUP = "BundleGroup";
const queue = { topic: TOPIC, brokerName: "broker-a", queueId: 0 };

/** The tour, bundle by bundle (by the function's name in infra/manifest.ts), in the order it runs. */
const TOUR: [string, { name: string; event: unknown }[]][] = [
  ["RegisterBrokers", [scheduled("RegisterBrokers")]],
  [
    "Topics",
    [
      api("PUT", `/topics/${TOPIC}`, { writeQueueNums: 1, readQueueNums: 1, brokerNames: ["broker-a"] }),
      api("GET", "/topics"),
    ],
  ],
  ["NameServer", [api("GET", "/health"), api("GET", `/topics/${TOPIC}/route`), api("GET", "/cluster")]],
  [
    "Send",
    [
      api("POST", "/send", { ...queue, messages: [{ body: text("hello from a bundle"), tags: "TagA" }] }),
      api("POST", "/send", { ...queue, messages: [{ body: text("x".repeat(16 * 1024)), tags: "TagB" }] }),
    ],
  ],
  ["Pull", [api("POST", "/pull", { consumerGroup: GROUP, ...queue, queueOffset: 0, maxMsgNums: 32 })]],
  [
    "Offsets",
    [
      api("PUT", `/offsets/${GROUP}/${TOPIC}`, { offsetTable: [{ brokerName: "broker-a", queueId: 0, offset: 1 }] }),
      api("GET", `/groups/${GROUP}/progress?topic=${TOPIC}`),
    ],
  ],
  [
    "Groups",
    [
      api("PUT", `/groups/${GROUP}/subscription-group`, {
        consumeEnable: true,
        consumeBroadcastEnable: true,
        retryMaxTimes: 3,
        consumeMessageOrderly: false,
      }),
      api("GET", "/groups"),
    ],
  ],
  [
    "Clients",
    [
      api("POST", "/heartbeat", {
        clientId: "bundle-client",
        consumerDataSet: [{ groupName: GROUP, subscriptionDataSet: [{ topic: TOPIC, subString: "*" }] }],
      }),
      api("GET", `/groups/${GROUP}/consumers`),
    ],
  ],
  [
    "Transactions",
    [api("POST", "/transactions", { producerGroup: "BundleTx", topic: TOPIC, message: { body: text("tx") } })],
  ],
  ["Acl", [api("POST", "/acl/users", { username: "alice", password: "alice-secret-1" }), api("GET", "/acl/users")]],
  [
    "Channel",
    [
      ws("$connect"),
      ws(
        "$default",
        JSON.stringify({
          type: "register",
          heartbeat: { clientId: "bundle-ws", consumerDataSet: [{ groupName: GROUP, subscriptionDataSet: [] }] },
          queues: [queue],
        }),
      ),
      ws("$default", JSON.stringify({ type: "ping" })),
      ws("$disconnect"),
    ],
  ],
  [
    "Subscriptions",
    [
      api("PUT", `/subscriptions/${GROUP}Hook`, {
        topic: TOPIC,
        target: { type: "http", url: "https://hooks.example.com/bundle", secret: "0123456789abcdef" },
      }),
      api("GET", "/subscriptions"),
    ],
  ],
  ["DelayedDelivery", [scheduled("DelayedDelivery")]],
  ["TransactionCheck", [scheduled("TransactionCheck")]],
  ["Retention", [scheduled("Retention")]],
  ["SampleLag", [scheduled("SampleLag")]],
  // The subscription starts after the tour's sends: its run finds nothing to deliver, and ends.
  ["Dispatch", [scheduled("Dispatch")]],
];

/** Runs `bundle` in a fresh Node process in `dir` with `env` only, on `events`; killed past the limit. */
function runBundle(dir: string, bundle: string, events: string, env: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(dir, "lambda-runner.mjs"), bundle, events], {
      cwd: dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROCESS_LIMIT_MS);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split("\n").at(-1) ?? "";
      if (code !== 0 || !line.startsWith("{")) {
        reject(new Error(`${path.basename(bundle)} exited ${code ?? signal}: ${err.slice(-2000)}${out.slice(-1000)}`));
        return;
      }
      resolve(JSON.parse(line) as RunResult);
    });
  });
}

/** The JSON body of an API answer that must be 200. */
function answer(inv: Invocation | undefined): Record<string, unknown> {
  assert.ok(inv, "invoked");
  assert.equal(inv.error, undefined, `${inv.name} threw: ${inv.error}`);
  const result = inv.result as { statusCode?: number; body?: string };
  assert.equal(result.statusCode, 200, `${inv.name} answered ${result.statusCode}: ${result.body}`);
  return JSON.parse(result.body ?? "null") as Record<string, unknown>;
}

describe("the function bundles, run as Lambda runs them", () => {
  let emulators: Emulators;
  let dir: string;

  before(async () => {
    emulators = await startEmulators("dynalite");
    dir = await mkdtemp(path.join(tmpdir(), "nimbus-lambda-bundles-"));
  });
  after(async () => {
    await emulators?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("every bundle loads with no node_modules and serves the tour on dynalite + s3rver", async () => {
    assert.ok(!dir.startsWith(ROOT), "the bundles run outside the repository");
    for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
      await assert.rejects(stat(path.join(d, "node_modules")), `no node_modules in ${d} or above`);
    }
    const names = { bucket: "nimbus-bundles", tablePrefix: "bundles-" };
    const aws = emulatorStorageOptions(emulators, names);
    await ensureTables(aws, BROKER_TABLES);
    await ensureBucket(aws);
    await copyFile(path.join(ROOT, "test/infra/lambda-runner.mjs"), path.join(dir, "lambda-runner.mjs"));
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: dir,
      NIMBUS_LAMBDA_LOCAL: createRequire(import.meta.url).resolve("lambda-local"),
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamoEndpoint,
      AWS_ENDPOINT_URL_S3: emulators.s3Endpoint,
      NIMBUS_BUCKET: names.bucket,
      NIMBUS_TABLES: JSON.stringify(
        Object.fromEntries(BROKER_TABLES.map((t) => [t.name, `${names.tablePrefix}${t.name}`])),
      ),
      NIMBUS_API_URL: `https://${API_HOST}`,
      NIMBUS_CHANNEL_URL: `wss://${CHANNEL_HOST}/prod`,
      NIMBUS_CONFIG: JSON.stringify(stageSettings("ci").nimbus),
      NIMBUS_ROLE: JSON.stringify({ kind: "all" }),
      NIMBUS_AUTH: "acl",
      NIMBUS_ACL_MASTER_KEY: "7".repeat(64),
      // The stage's NimbusSealKey, as infra gives it to Subscriptions and Dispatch.
      NIMBUS_SEAL_KEY: "8".repeat(64),
      NIMBUS_ROOT_USER: ROOT_USER.accessKey,
      NIMBUS_ROOT_PASSWORD: ROOT_USER.secretKey,
    };

    const handlers = await handlersNamedInInfra();
    const byFunction = new Map<string, string>(
      Object.entries(ALL_FUNCTIONS).map(([name, spec]) => [spec.handler, name]),
    );
    const toured = new Set(TOUR.map(([fn]) => fn));
    assert.deepEqual(
      handlers
        .map((h) => byFunction.get(`${h.file}.${h.exportName}`))
        .filter((fn) => fn === undefined || !toured.has(fn)),
      [],
      "the tour runs every bundle infra/ deploys",
    );

    const results = new Map<string, RunResult>();
    const sizes = new Map<string, number>();
    for (const [fn, events] of TOUR) {
      const spec = ALL_FUNCTIONS[fn];
      assert.ok(spec, `${fn} is in the manifest`);
      const file = spec.handler.replace(/\.\w+$/, "");
      const built = path.join(dir, "build", `${fn}.mjs`);
      await bundleLikeSst(path.join(ROOT, `${file}.ts`), built);
      // As Lambda unpacks it: the bundle alone in its task folder.
      const taskDir = path.join(dir, fn);
      await rm(taskDir, { recursive: true, force: true });
      const bundle = path.join(taskDir, "index.mjs");
      await mkdir(taskDir, { recursive: true });
      await copyFile(built, bundle);
      sizes.set(fn, (await stat(bundle)).size);
      const eventsFile = path.join(dir, `${fn}.events.json`);
      await writeFile(eventsFile, JSON.stringify(events));
      results.set(fn, await runBundle(dir, bundle, eventsFile, env));
    }

    const inv = (fn: string, i: number) => results.get(fn)?.invocations[i];
    const registered = inv("RegisterBrokers", 0);
    assert.equal(registered?.error, undefined, registered?.error);
    const count = ((registered?.result ?? {}) as { registered?: number }).registered ?? 0;
    assert.ok(count >= 1, "the brokers registered");
    answer(inv("Topics", 0));
    assert.ok((answer(inv("Topics", 1)).topics as string[]).includes(TOPIC));
    answer(inv("NameServer", 0));
    const route = answer(inv("NameServer", 1)) as { queueDatas: { brokerName: string }[] };
    assert.deepEqual(
      route.queueDatas.map((q) => q.brokerName),
      ["broker-a"],
    );
    const sent = [answer(inv("Send", 0)), answer(inv("Send", 1))];
    assert.deepEqual(
      sent.map((s) => [s.sendStatus, s.queueOffset]),
      [
        ["SEND_OK", 0],
        ["SEND_OK", 1],
      ],
      "an inline batch and one in the bucket",
    );
    const pulled = answer(inv("Pull", 0)) as { pullStatus: string; messages: { body: string; tags: string }[] };
    assert.equal(pulled.pullStatus, "FOUND");
    assert.deepEqual(
      pulled.messages.map((m) => [Buffer.from(m.body, "base64").toString().slice(0, 19), m.tags]),
      [
        ["hello from a bundle", "TagA"],
        ["x".repeat(19), "TagB"],
      ],
    );
    answer(inv("Offsets", 0));
    const progress = answer(inv("Offsets", 1)) as { rows: { consumerOffset: number; diff: number }[] };
    assert.deepEqual(
      progress.rows.map((r) => [r.consumerOffset, r.diff]),
      [[1, 1]],
    );
    answer(inv("Groups", 0));
    const groups = answer(inv("Groups", 1)) as {
      groups: { group: string; subscriptionGroup?: { retryMaxTimes?: number } }[];
    };
    assert.equal(
      groups.groups.find((g) => g.group === GROUP)?.subscriptionGroup?.retryMaxTimes,
      3,
      "the group's config",
    );
    answer(inv("Clients", 0));
    assert.equal((answer(inv("Clients", 1)).consumers as unknown[]).length, 1, "the heartbeat's consumer");
    assert.match(String(answer(inv("Transactions", 0)).transactionId), /\S/);
    answer(inv("Acl", 0));
    assert.ok(JSON.stringify(answer(inv("Acl", 1))).includes("alice"));
    for (let i = 0; i < 4; i++)
      assert.equal(((inv("Channel", i)?.result ?? {}) as { statusCode?: number }).statusCode, 200);
    answer(inv("Subscriptions", 0));
    assert.equal((answer(inv("Subscriptions", 1)).subscriptions as unknown[]).length, 1, "the saved subscription");
    const dispatched = inv("Dispatch", 0)?.result as { subscriptions?: number; delivered?: number } | undefined;
    assert.deepEqual([dispatched?.subscriptions, dispatched?.delivered], [1, 0], inv("Dispatch", 0)?.error);
    for (const fn of ["DelayedDelivery", "TransactionCheck", "Retention", "SampleLag", "Dispatch"]) {
      const run = inv(fn, 0);
      assert.equal(run?.error, undefined, `${fn}: ${run?.error}`);
      assert.equal(typeof run?.result, "object", `${fn} answers its report`);
    }

    // The figures docs/deploy.md quotes: size, Init (module load), first and later invocations.
    for (const [fn] of TOUR) {
      const r = results.get(fn);
      const calls = r?.invocations ?? [];
      console.log(
        `[bundles] ${fn}: ${((sizes.get(fn) ?? 0) / 1024).toFixed(0)} KiB, init ${r?.initMs.toFixed(0)} ms, ` +
          `first invocation ${calls[0]?.ms.toFixed(0)} ms${calls.length > 1 ? `, next ${calls[1]?.ms.toFixed(0)} ms` : ""}`,
      );
    }
  });
});
