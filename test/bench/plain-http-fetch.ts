/**
 * @module One stock HTTP client of the plain-http suite (plain-http.ts), in its own process: Node's global `fetch`
 * with no pool tuning — `<url> <topic> open <rate> <seconds>` (open loop: one 1 KiB JSON `POST /send` per message,
 * each leaving on schedule, in an event-loop turn of its own, whatever the ones before it did) or `<url> <topic> closed <senders> <seconds>` (closed
 * loop: `senders` sending one after another, what the broker serves a client that waits for its answers: the
 * capacity). With NIMBUS_ACCESS_KEY and NIMBUS_SECRET_KEY set every request is signed (docs/security.md). Prints
 * `RESULT {ok, busy, other, errors, okMs, busyMs, lagMs, callMs, okCallMs, busyCallMs, busyWhy, cpuSeconds, seconds}`: the
 * answers' times in ms from each send's scheduled start (sorted), the client's own start lag (how late it called
 * `fetch`), every answer's, every OK's and every refusal's time from its `fetch` call, and the refusals counted by
 * the reason their message gives (`refusalReason`).
 */
import { signNimbusRequest } from "../../lib/core/request-signing.js";

const [url = "", topic = "", mode = "open", countArg = "2000", secondsArg = "5"] = process.argv.slice(2);
const seconds = Number(secondsArg);
const body = JSON.stringify({ topic, messages: [{ body: Buffer.alloc(1024, 97).toString("base64") }] });
const accessKey = process.env.NIMBUS_ACCESS_KEY;
const secretKey = process.env.NIMBUS_SECRET_KEY;
const counts = { ok: 0, busy: 0, other: 0, errors: 0 };
const okMs: number[] = [];
const busyMs: number[] = [];
const lagMs: number[] = [];
/** Every answer's time from the `fetch` call (the client's own lag left out). */
const callMs: number[] = [];
/** OK answers' and refusals' times from the `fetch` call. */
const okCallMs: number[] = [];
const busyCallMs: number[] = [];
/** Refusals by the reason their message names. */
const busyWhy: Record<string, number> = {};
const errorKinds: Record<string, number> = {};

function headers(): Record<string, string> {
  const plain = { "content-type": "application/json" };
  if (accessKey === undefined || secretKey === undefined) return plain;
  const credentials = { accessKey, secretKey };
  return { ...plain, ...signNimbusRequest({ method: "POST", url: `${url}/send`, headers: plain, body, credentials }) };
}

async function send(due: number): Promise<void> {
  const called = performance.now();
  lagMs.push(called - due);
  try {
    const res = await fetch(`${url}/send`, { method: "POST", headers: headers(), body });
    const answer = (await res.json()) as { code?: string; message?: string };
    callMs.push(performance.now() - called);
    if (res.ok) {
      counts.ok++;
      okMs.push(performance.now() - due);
      okCallMs.push(performance.now() - called);
    } else if (answer.code === "SYSTEM_BUSY") {
      counts.busy++;
      busyMs.push(performance.now() - due);
      busyCallMs.push(performance.now() - called);
      const why = refusalReason(answer.message ?? "");
      busyWhy[why] = (busyWhy[why] ?? 0) + 1;
    } else counts.other++;
  } catch (err) {
    counts.errors++;
    const kind = String((err as { cause?: { code?: unknown } }).cause?.code ?? (err as Error).message).slice(0, 40);
    errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
  }
}

/** The shedder's reason, read from a SYSTEM_BUSY answer's message (lib/http/load-shedder.ts words them). */
function refusalReason(message: string): string {
  if (message.includes("event loop runs")) return "loop lag";
  if (message.includes("ms of work")) return "expected wait";
  if (message.includes("requests are waiting")) return "line full";
  if (message.includes("for its turn")) return "waited past the bound";
  return "other";
}

const started = performance.now();
if (mode === "open") {
  const rate = Number(countArg);
  const total = Math.round(rate * seconds);
  const sends: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    // Each send leaves in a turn of the event loop of its own, as sends an application makes on its events do: a
    // loop that ran on without yielding once behind would queue every later send before any reached the network.
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else await new Promise((resolve) => setImmediate(resolve));
    sends.push(send(due));
  }
  await Promise.all(sends);
} else {
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: Number(countArg) }, async () => {
      while (performance.now() < end) await send(performance.now());
    }),
  );
}
const elapsed = (performance.now() - started) / 1000;
const usage = process.cpuUsage();
for (const list of [okMs, busyMs, lagMs, callMs, okCallMs, busyCallMs]) list.sort((a, b) => a - b);
if (counts.errors > 0) console.error(`plain fetch: connection errors ${JSON.stringify(errorKinds)}`);
const result = {
  ...counts,
  okMs,
  busyMs,
  lagMs,
  callMs,
  okCallMs,
  busyCallMs,
  busyWhy,
  cpuSeconds: (usage.user + usage.system) / 1e6,
  seconds: elapsed,
};
console.log(`RESULT ${JSON.stringify(result)}`);
