/**
 * @module The local server's memory under twenty concurrent 4 MiB sends, with and without the in-flight byte
 * cap (docs/security.md): each run is a server process of its own (`--server <capped|uncapped>`), whose peak
 * RSS (VmHWM, Linux) is read after the sends. Run: `node --import tsx test/bench/in-flight-memory.ts`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startLocalServer } from "../../lib/dev/local-server.js";

const SENDS = 20;
const RAW_BYTES = 3 * 1024 * 1024; // 4 MiB once in base64

async function serve(mode: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "nimbus-rss-"));
  const server = await startLocalServer({
    port: 0,
    storage: { kind: "local", dataDir },
    ...(mode === "uncapped" ? { maxInFlightBytes: Number.MAX_SAFE_INTEGER } : {}),
  });
  process.stdout.write(`${server.url}\n`);
  process.once("SIGTERM", () => {
    void server.close().then(() => rmSync(dataDir, { recursive: true, force: true }));
  });
}

const megabytes = (pid: number, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

async function measure(mode: string): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--server", mode], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const pid = child.pid ?? 0;
  const url = await new Promise<string>((resolve) =>
    child.stdout.once("data", (d: Buffer) => resolve(d.toString().trim())),
  );
  await fetch(`${url}/topics/R`, { method: "PUT", body: "{}" });
  const before = megabytes(pid, "VmRSS");
  const body = JSON.stringify({ topic: "R", messages: [{ body: Buffer.alloc(RAW_BYTES, 7).toString("base64") }] });
  const statuses = await Promise.all(
    Array.from({ length: SENDS }, () =>
      fetch(`${url}/send`, { method: "POST", body, headers: { "content-type": "application/json" } }).then(
        (r) => r.status,
      ),
    ),
  );
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  console.log(
    `${mode}: RSS before ${before.toFixed(0)} MB, peak ${megabytes(pid, "VmHWM").toFixed(0)} MB, answers ${JSON.stringify(counts)}`,
  );
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
}

const at = process.argv.indexOf("--server");
if (at >= 0) await serve(process.argv[at + 1] ?? "capped");
else for (const mode of ["uncapped", "capped"]) await measure(mode);
