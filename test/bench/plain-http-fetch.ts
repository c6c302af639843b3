/**
 * @module One stock HTTP client of the plain-http suite (plain-http.ts), in its own process: Node's global `fetch`
 * with no pool tuning, open loop — `<url> <topic> <rate> <seconds>`: one 1 KiB JSON `POST /send` per message, each
 * leaving on schedule whatever the ones before it did. Prints `RESULT {ok, busy, other, errors, latencies (ms from
 * the scheduled start, OK answers, sorted), cpuSeconds}`.
 */
const [url = "", topic = "", rateArg = "2000", secondsArg = "5"] = process.argv.slice(2);
const rate = Number(rateArg);
const total = Math.round(rate * Number(secondsArg));
const body = JSON.stringify({ topic, messages: [{ body: Buffer.alloc(1024, 97).toString("base64") }] });
const counts = { ok: 0, busy: 0, other: 0, errors: 0 };
const latencies: number[] = [];
const started = performance.now();
const sends: Promise<void>[] = [];
for (let i = 0; i < total; i++) {
  const due = started + (i * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  sends.push(
    (async () => {
      try {
        const res = await fetch(`${url}/send`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        const answer = (await res.json()) as { code?: string };
        if (res.ok) {
          counts.ok++;
          latencies.push(performance.now() - due);
        } else if (answer.code === "SYSTEM_BUSY") counts.busy++;
        else counts.other++;
      } catch {
        counts.errors++;
      }
    })(),
  );
}
await Promise.all(sends);
const usage = process.cpuUsage();
latencies.sort((a, b) => a - b);
console.log(`RESULT ${JSON.stringify({ ...counts, latencies, cpuSeconds: (usage.user + usage.system) / 1e6 })}`);
