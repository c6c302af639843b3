/**
 * @module `npx tsx test/bench/refusal-cost.ts [--sends N]`: what one answer costs the server's CPU, per request,
 * for the three servers of refusal-cost-server.ts, each in a process of its own: `bare` (`node:http` answering 503
 * at once: Node's parse and write alone), `refuse` (the local server refusing every send on arrival) and `serve`
 * (the local server storing them, `--flush async`). The load: 1 KiB JSON `POST /send`s, 64 in flight on 16
 * kept-alive connections (undici), after 2,000 to warm up. CPU from /proc (user + system) over the measured sends.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { procCpuSeconds } from "./stats.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { sends: { type: "string", default: "20000" } } });
const sends = Number(values.sends);
const WARM_UP = 2_000;
const body = JSON.stringify({ topic: "RefusalCost", messages: [{ body: Buffer.alloc(1024, 97).toString("base64") }] });
const json = { "content-type": "application/json" };

async function measure(kind: "bare" | "refuse" | "serve") {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(HERE, "refusal-cost-server.ts"), kind], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.once("exit", (code) => reject(new Error(`the ${kind} server exited ${code}`)));
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        const m = /URL (\S+)/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
    });
    const pool = new Pool(url, { connections: 16 });
    const topic = JSON.stringify({ readQueueNums: 8, writeQueueNums: 8 });
    await (await pool.request({ path: "/topics/RefusalCost", method: "PUT", headers: json, body: topic })).body.text();
    const statuses = new Map<number, number>();
    const run = async (n: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          while (next++ < n) {
            const res = await pool.request({ path: "/send", method: "POST", headers: json, body });
            await res.body.text();
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          }
        }),
      );
    };
    await run(WARM_UP);
    statuses.clear();
    const cpu0 = procCpuSeconds(child.pid ?? 0);
    await run(sends);
    const cpu = procCpuSeconds(child.pid ?? 0) - cpu0;
    await pool.close();
    return { kind, sends, statuses: Object.fromEntries(statuses), serverUsPerRequest: Math.round((cpu * 1e6) / sends) };
  } finally {
    child.kill();
  }
}

for (const kind of ["bare", "refuse", "serve"] as const) console.log(JSON.stringify(await measure(kind)));
