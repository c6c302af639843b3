/**
 * @module Issue 26's sweep: a server process of its own (`--server`), then (1) each category of hostile body once,
 * read, recording the answer's size (none may be over 64 KiB); (2) for `--seconds` (default 60), 8 clients sending
 * maximal hostile bodies (about 6 MB each, the largest request there is) on fresh connections that never read their
 * answers, while one more client times `GET /health` every 50 ms and the server's RSS is sampled
 * (/proc/<pid>/status, Linux). Run: `NODE_OPTIONS=--openssl-legacy-provider node --import tsx test/bench/hostile-sweep.ts`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalServer } from "../../lib/dev/local-server.js";
import { MAX_REQUEST_BYTES } from "../../lib/protocol/index.js";
import { rawHttp } from "../support/raw-http.js";

const CLIENTS = 8;

/** Maximal hostile bodies, one per category, each just under MAX_REQUEST_BYTES. */
function hostileBodies(): Record<string, { path: string; body: string }> {
  const room = MAX_REQUEST_BYTES - 200;
  const items = Math.floor(room / 2);
  const keys = Math.floor(room / 14);
  return {
    "huge array": { path: "/send", body: `{"topic":"Fz","messages":[${"1,".repeat(items - 1)}1]}` },
    "huge map": {
      path: "/send",
      body: `{"topic":"Fz","messages":[{"body":"eA==","properties":{${Array.from({ length: keys }, (_, i) => `"k${i}":"v"`).join(",")}}}]}`,
    },
    "deep nesting": { path: "/heartbeat", body: `${"[".repeat(room / 2)}${"]".repeat(room / 2)}` },
    "invalid messages": {
      path: "/send",
      body: JSON.stringify({ topic: "Fz", messages: Array(4000).fill({ body: 1, tags: 2 }) }),
    },
    "long group": {
      path: "/send-back",
      body: JSON.stringify({
        consumerGroup: "g".repeat(room - 200),
        topic: "Fz",
        brokerName: "broker-a",
        queueId: 0,
        queueOffset: 0,
      }),
    },
    "bad JSON": { path: "/send", body: `{"topic":"${"x".repeat(room)}` },
  };
}

async function serve(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "nimbus-sweep-"));
  const server = await startLocalServer({ port: 0, storage: { kind: "local", dataDir } });
  process.stdout.write(`${server.url}\n`);
  process.once("SIGTERM", () => {
    void server.close().then(() => rmSync(dataDir, { recursive: true, force: true }));
  });
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;

async function sweep(seconds: number): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--server"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const pid = child.pid ?? 0;
  const url = await new Promise<string>((resolve) =>
    child.stdout.once("data", (d: Buffer) => resolve(d.toString().trim())),
  );
  const port = Number(new URL(url).port);
  const bodies = hostileBodies();
  for (const [name, { path, body }] of Object.entries(bodies)) {
    const answer = await rawHttp(url, { method: "POST", path, headers: { "content-type": "application/json" }, body });
    console.log(
      `${name}: ${(body.length / 1e6).toFixed(1)} MB body -> ${answer.status}, ${answer.bytes} bytes answered`,
    );
  }
  const kinds = Object.values(bodies);
  const deadline = Date.now() + seconds * 1000;
  let sent = 0;
  const attacker = async (i: number) => {
    while (Date.now() < deadline) {
      const { path, body } = kinds[(i + sent) % kinds.length] as { path: string; body: string };
      await new Promise<void>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.pause(); // never reads the answer
        socket.on("error", () => resolve());
        socket.on("close", () => resolve());
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
        );
        socket.end(body, () => {
          sent++;
          // Hold the unread answer a while, then go (as a client that gave up would).
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 2000);
        });
      });
    }
  };
  const health: number[] = [];
  const rss: number[] = [];
  const probe = async () => {
    while (Date.now() < deadline) {
      const t0 = performance.now();
      const r = await fetch(`${url}/health`);
      await r.text();
      health.push(performance.now() - t0);
      rss.push(rssMb(pid));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await Promise.all([probe(), ...Array.from({ length: CLIENTS }, (_, i) => attacker(i))]);
  console.log(
    `${CLIENTS} clients, ${seconds} s: ${sent} hostile bodies sent (answers never read); /health p50 ${percentile(health, 0.5).toFixed(1)} ms, p99 ${percentile(health, 0.99).toFixed(1)} ms, max ${Math.max(...health).toFixed(1)} ms over ${health.length} probes; RSS max ${Math.max(...rss).toFixed(0)} MB`,
  );
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
}

const at = process.argv.indexOf("--seconds");
if (process.argv.includes("--server")) await serve();
else await sweep(at >= 0 ? Number(process.argv[at + 1]) : 60);
