/**
 * @module `npm run bench:profile`: where a local server's CPU goes under single-message sends. Starts
 * `nimbus dev` as its own process under `node --cpu-prof`, sends one message per request from
 * `--clients` concurrent SDK producers (default 4) for `--seconds` (default 10), stops the server (which
 * writes its profile) and prints the profile's idle share and top frames by self time; with `KEEP_PROFILE` set
 * it keeps the `.cpuprofile` and prints where.
 * See docs/benchmarks.md ("Profiles").
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { startBrokerProcess } from "./broker-process.js";
import { summarizeProfile } from "./profile-summary.js";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "10" }, clients: { type: "string", default: "4" } },
});
const seconds = Number(values.seconds);
const clients = Number(values.clients);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "nimbus-profile-"));
  const broker = await startBrokerProcess({
    dataDir: join(dir, "data"),
    cpuProfileDir: join(dir, "prof"),
  });
  try {
    const api = new NimbusApi({ endpoints: broker.url, timeoutMs: 30_000 });
    const topic = `Profile${Date.now().toString(36)}`;
    await api.updateTopic(topic, { readQueueNums: 8, writeQueueNums: 8 });
    const body = new Uint8Array(1024);
    let sent = 0;
    const deadline = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < deadline) {
          await api.send({ topic, messages: [{ body }] });
          sent++;
        }
      }),
    );
    console.log(
      `sent ${sent} single-message sends in ${seconds} s (${Math.round(sent / seconds)}/s), ${clients} clients`,
    );
  } finally {
    await broker.stop();
  }
  const [file] = (await readdir(join(dir, "prof"))).filter((f) => f.endsWith(".cpuprofile"));
  if (file === undefined) throw new Error("the server wrote no profile");
  console.log(summarizeProfile(JSON.parse(await readFile(join(dir, "prof", file), "utf8")), 20));
  if (process.env.KEEP_PROFILE === undefined) await rm(dir, { recursive: true, force: true });
  else console.log(`profile kept in ${dir}`);
}

main().catch((err: unknown) => {
  console.error("profile failed:", err);
  process.exitCode = 1;
});
