/**
 * @module The real `nimbus dev` command in a child process: it prints its URL, serves the API on the
 * embedded store (and on the DynamoDB/S3 emulators with `--storage aws`), keeps data across runs on one
 * data folder, and exits 0 on SIGINT / SIGTERM.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { EMULATOR_CREDENTIALS } from "../support/emulators.js";
import { api, b64, ok, type PullAnswer, type SendAnswer, text } from "../support/http.js";
import { acquireEmulators } from "../support/shared-emulators.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/** Only a guard against a hung child: the test fails instead of hanging. Not a speed requirement. */
const GUARD_MS = 300_000;

interface Cli {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Sends `signal` and resolves with the exit code (null if killed by a signal). */
  stop(signal: NodeJS.Signals): Promise<number | null>;
}

async function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Cli> {
  const child = spawn(process.execPath, ["--import", "tsx", "lib/cli/main.ts", "dev", "--port", "0", ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const guard = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no URL printed within the guard time:\n${out}`));
    }, GUARD_MS);
    const look = () => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(guard);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", look);
    void exited.then((code) => {
      clearTimeout(guard);
      reject(new Error(`the CLI exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    async stop(signal) {
      child.kill(signal);
      const guard = setTimeout(() => child.kill("SIGKILL"), GUARD_MS);
      const code = await exited;
      clearTimeout(guard);
      return code;
    },
  };
}

/** Runs the CLI to its end (for commands that must fail at once). */
function runCli(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "lib/cli/main.ts", ...args], { cwd: REPO });
  let output = "";
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const guard = setTimeout(() => child.kill("SIGKILL"), GUARD_MS);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(guard);
      resolve({ code, output });
    }),
  );
}

describe("nimbus dev (the CLI, in a child process)", () => {
  let dataDir = "";
  before(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-cli-"));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it("prints its URL, serves the API, and exits 0 on SIGINT", async () => {
    const cli = await startCli(["--data-dir", dataDir]);
    try {
      const http = api(cli.url);
      assert.deepEqual(ok(await http.get("/health")), { status: "ok" });
      ok(await http.put("/topics/CliTopic", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] }));
      const sent = ok(
        await http.post<SendAnswer>("/send", { topic: "CliTopic", messages: [{ body: b64("from the cli") }] }),
      );
      assert.equal(sent.queueOffset, 0);
    } finally {
      const code = await cli.stop("SIGINT");
      assert.equal(code, 0, cli.output());
    }
    assert.match(cli.output(), /SIGINT, stopping/);
  });

  it("a second run on the same data folder (--flush sync) has the messages; SIGTERM also exits 0", async () => {
    const cli = await startCli(["--data-dir", dataDir, "--flush", "sync"]);
    try {
      assert.match(cli.output(), /--flush sync/);
      const http = api(cli.url);
      const pulled = ok(
        await http.post<PullAnswer>("/pull", {
          consumerGroup: "CG",
          topic: "CliTopic",
          brokerName: "broker-a",
          queueId: 0,
          queueOffset: 0,
        }),
      );
      assert.deepEqual(
        pulled.messages.map((m) => text(m.body)),
        ["from the cli"],
      );
    } finally {
      assert.equal(await cli.stop("SIGTERM"), 0, cli.output());
    }
  });

  it("with --storage aws on the emulators, it provisions, serves, and exits 0 on SIGINT", async () => {
    const { emulators, release } = await acquireEmulators();
    try {
      const cli = await startCli(
        [
          "--storage",
          "aws",
          "--provision",
          "--bucket",
          `nimbus-cli-${process.pid}`,
          "--table-prefix",
          "cli-",
          "--dynamo-endpoint",
          emulators.dynamoEndpoint,
          "--s3-endpoint",
          emulators.s3Endpoint,
        ],
        // The emulators' fixed test keys, read by the SDK's default credential chain in the child.
        {
          AWS_ACCESS_KEY_ID: EMULATOR_CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: EMULATOR_CREDENTIALS.secretAccessKey,
        },
      );
      try {
        const http = api(cli.url);
        const body = b64(Buffer.alloc(20 * 1024, 7));
        const sent = ok(await http.post<SendAnswer>("/send", { topic: "CliAws", messages: [{ body }] }));
        const { brokerName, queueId } = sent.messageQueue;
        const pulled = ok(
          await http.post<PullAnswer>("/pull", {
            consumerGroup: "CG",
            topic: "CliAws",
            brokerName,
            queueId,
            queueOffset: 0,
          }),
        );
        assert.deepEqual(
          pulled.messages.map((m) => m.body),
          [body],
        );
      } finally {
        assert.equal(await cli.stop("SIGINT"), 0, cli.output());
      }
    } finally {
      await release();
    }
  });

  it("--transaction-timeout and --transaction-check-interval set the check-backs' timing", async () => {
    const txDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-cli-tx-"));
    const cli = await startCli([
      "--data-dir",
      txDir,
      "--transaction-timeout",
      "0",
      "--transaction-check-interval",
      "100",
    ]);
    try {
      const http = api(cli.url);
      const half = ok(
        await http.post<{ transactionId: string }>("/transactions", {
          producerGroup: "CliTx",
          topic: "CliTxTopic",
          message: { body: b64("pending") },
        }),
      );
      const heartbeat = {
        clientId: "127.0.0.1@cli-test",
        producerDataSet: [{ groupName: "CliTx", transactional: true }],
      };
      // Three checks take 2 intervals: 0.2 s here, 120 s with the defaults (longer than the guard).
      const deadline = Date.now() + GUARD_MS;
      let checkTimes = 0;
      while (checkTimes < 3) {
        assert.ok(Date.now() < deadline, `only ${checkTimes} checks within the guard time:\n${cli.output()}`);
        const answer = ok(
          await http.post<{ transactionChecks: { transactionId: string; checkTimes: number }[] }>(
            "/heartbeat",
            heartbeat,
          ),
        );
        for (const c of answer.transactionChecks) if (c.transactionId === half.transactionId) checkTimes = c.checkTimes;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      assert.equal(await cli.stop("SIGTERM"), 0, cli.output());
      rmSync(txDir, { recursive: true, force: true });
    }
  });

  it("--slaves 1 adds a read-only slave of each broker at its own address", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-cli-slaves-"));
    const cli = await startCli(["--data-dir", dir, "--slaves", "1"]);
    try {
      const http = api(cli.url);
      const cluster = ok(
        await http.get<{ brokerAddrTable: Record<string, { brokerAddrs: Record<string, string> }> }>("/cluster"),
      );
      for (const name of ["broker-a", "broker-b"]) {
        const addrs = cluster.brokerAddrTable[name]?.brokerAddrs ?? {};
        assert.deepEqual(Object.keys(addrs).sort(), ["0", "1"], name);
        assert.equal(addrs["0"], cli.url);
        assert.notEqual(addrs["1"], cli.url);
        assert.match(cli.output(), new RegExp(`${name} slave 1 listening on ${addrs["1"]}`));
        const refused = await api(addrs["1"] ?? "").post("/send", {
          topic: "SlaveTopic",
          messages: [{ body: b64("x") }],
        });
        assert.equal(refused.status, 403, `${name}'s slave refuses sends`);
      }
    } finally {
      assert.equal(await cli.stop("SIGTERM"), 0, cli.output());
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses bad options with exit code 1 and a message", async () => {
    const noBucket = await runCli(["dev", "--port", "0", "--storage", "aws"]);
    assert.equal(noBucket.code, 1, noBucket.output);
    assert.match(noBucket.output, /--bucket/);
    const badPort = await runCli(["dev", "--port", "70000"]);
    assert.notEqual(badPort.code, 0, badPort.output);
    assert.match(badPort.output, /port/);
    const badTimeout = await runCli(["dev", "--port", "0", "--transaction-timeout", "-5"]);
    assert.notEqual(badTimeout.code, 0, badTimeout.output);
    assert.match(badTimeout.output, /ms/);
    // A --target-ca file without a certificate stops the start: no dispatcher that fails every HTTPS delivery.
    const dir = mkdtempSync(path.join(os.tmpdir(), "nimbus-cli-ca-"));
    try {
      writeFileSync(path.join(dir, "ca.pem"), "not a certificate\n");
      const args = ["dev", "--port", "0", "--grpc-port", "0", "--data-dir", path.join(dir, "data")];
      const badCa = await runCli([...args, "--target-ca", path.join(dir, "ca.pem")]);
      assert.equal(badCa.code, 1, badCa.output);
      assert.match(badCa.output, /target CA file holds no PEM certificate/);
      assert.doesNotMatch(badCa.output, /listening on/);
      const missing = await runCli([...args, "--target-ca", path.join(dir, "absent.pem")]);
      assert.equal(missing.code, 1, missing.output);
      assert.match(missing.output, /absent\.pem/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
