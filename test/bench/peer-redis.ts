/**
 * @module Redis Streams through the same kind of harness as `--suite peer` (a Node client, 1 KiB messages):
 * produce = 32 `XADD`s pipelined (one batch in flight), consume = `XRANGE … COUNT 32` (one read in flight),
 * end-to-end = one `XADD` per message at a fixed rate with a consumer in `XREAD BLOCK`. A minimal RESP client
 * over a socket (no Redis package needed). Run by test/bench/peer-redis.sh against a redis-server it starts:
 * `tsx test/bench/peer-redis.ts --port 6379`. Not a test dependency.
 */
import { createConnection, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { round, summarize } from "./stats.js";

type Reply = string | number | null | Error | Reply[];

/** One connection, commands pipelined; replies come back in order. */
class Resp {
  readonly #socket: Socket;
  #buffer: Buffer = Buffer.alloc(0);
  readonly #waiting: ((reply: Reply) => void)[] = [];

  constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#buffer = this.#buffer.byteLength === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      for (;;) {
        const parsed = parse(this.#buffer, 0);
        if (parsed === undefined) break;
        this.#buffer = this.#buffer.subarray(parsed.end);
        this.#waiting.shift()?.(parsed.value);
      }
    });
  }

  static connect(port: number): Promise<Resp> {
    return new Promise((resolve, reject) => {
      const socket = createConnection({ port, host: "127.0.0.1" }, () => resolve(new Resp(socket)));
      socket.once("error", reject);
    });
  }

  /** Sends every command at once; answers their replies in order. */
  send(commands: (string | Buffer)[][]): Promise<Reply[]> {
    const parts: Buffer[] = [];
    for (const args of commands) {
      parts.push(Buffer.from(`*${args.length}\r\n`));
      for (const a of args) {
        const b = typeof a === "string" ? Buffer.from(a) : a;
        parts.push(Buffer.from(`$${b.byteLength}\r\n`), b, Buffer.from("\r\n"));
      }
    }
    const replies = commands.map(() => new Promise<Reply>((resolve) => this.#waiting.push(resolve)));
    this.#socket.write(Buffer.concat(parts));
    return Promise.all(replies);
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** One RESP value at `at`, or undefined when the buffer does not hold all of it yet. */
function parse(buf: Buffer, at: number): { value: Reply; end: number } | undefined {
  const eol = buf.indexOf("\r\n", at);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[at] ?? 0);
  const line = buf.toString("latin1", at + 1, eol);
  if (type === "+") return { value: line, end: eol + 2 };
  if (type === "-") return { value: new Error(line), end: eol + 2 };
  if (type === ":") return { value: Number(line), end: eol + 2 };
  const n = Number(line);
  if (type === "$") {
    if (n < 0) return { value: null, end: eol + 2 };
    if (buf.byteLength < eol + 2 + n + 2) return undefined;
    return { value: buf.toString("latin1", eol + 2, eol + 2 + n), end: eol + 2 + n + 2 };
  }
  if (type === "*") {
    if (n < 0) return { value: null, end: eol + 2 };
    const items: Reply[] = [];
    let end = eol + 2;
    for (let i = 0; i < n; i++) {
      const item = parse(buf, end);
      if (item === undefined) return undefined;
      items.push(item.value);
      end = item.end;
    }
    return { value: items, end };
  }
  throw new Error(`RESP: unexpected type ${type}`);
}

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    seconds: { type: "string", default: "8" },
    rate: { type: "string", default: "2000" },
    "e2e-seconds": { type: "string", default: "10" },
  },
});

async function main(): Promise<void> {
  const port = Number(values.port);
  const seconds = Number(values.seconds);
  const body = Buffer.alloc(1024, 0x61);
  const client = await Resp.connect(port);
  // Produce: 32 XADDs pipelined, one batch in flight.
  let produced = 0;
  let cpu = process.cpuUsage();
  let started = performance.now();
  const batch = Array.from({ length: 32 }, () => ["XADD", "bench", "*", "d", body]);
  while (performance.now() - started < seconds * 1000) {
    const replies = await client.send(batch);
    if (replies.some((r) => r instanceof Error)) throw new Error(String(replies.find((r) => r instanceof Error)));
    produced += 32;
  }
  const produceS = (performance.now() - started) / 1000;
  let used = process.cpuUsage(cpu);
  console.log(
    `produce, XADD x32 pipelined (one batch in flight): ${Math.round(produced / produceS)} msg/s, ` +
      `client CPU ${round((used.user + used.system) / produced, 1)} µs/msg`,
  );
  // Consume: XRANGE from the last id, 32 at a time, one read in flight.
  let consumed = 0;
  let from = "-";
  cpu = process.cpuUsage();
  started = performance.now();
  while (consumed < produced) {
    const [reply] = await client.send([["XRANGE", "bench", from, "+", "COUNT", "32"]]);
    const entries = reply as [string, Reply[]][];
    if (!Array.isArray(entries) || entries.length === 0) break;
    consumed += entries.length;
    from = `(${entries[entries.length - 1]?.[0]}`;
  }
  const consumeS = (performance.now() - started) / 1000;
  used = process.cpuUsage(cpu);
  console.log(
    `consume, XRANGE COUNT 32 (one read in flight): ${Math.round(consumed / consumeS)} msg/s, ` +
      `client CPU ${round((used.user + used.system) / Math.max(1, consumed), 1)} µs/msg`,
  );
  // End-to-end: one XADD per message at a fixed rate; a consumer blocks in XREAD on its own connection.
  const rate = Number(values.rate);
  const total = Math.round(rate * Number(values["e2e-seconds"]));
  const reader = await Resp.connect(port);
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let received = 0;
  const consumer = (async () => {
    let last = "$";
    while (received < total) {
      const [reply] = await reader.send([["XREAD", "BLOCK", "2000", "COUNT", "256", "STREAMS", "e2e", last]]);
      if (reply === null) break;
      const entries = ((reply as Reply[][])[0]?.[1] ?? []) as [string, string[]][];
      const now = performance.now();
      for (const [id, fields] of entries) {
        const at = sentAt.get(fields[1]?.slice(0, 12) ?? "");
        if (at !== undefined) latencies.push(now - at);
        received++;
        last = id;
      }
    }
  })();
  started = performance.now();
  const sends: Promise<Reply[]>[] = [];
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    while (sent < due) {
      const tag = String(sent++).padStart(12, "0");
      sentAt.set(tag, performance.now());
      sends.push(client.send([["XADD", "e2e", "*", "d", Buffer.concat([Buffer.from(tag), body.subarray(12)])]]));
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(sends);
  await consumer;
  const s = summarize(latencies);
  console.log(
    `end-to-end at ${rate} msg/s, one XADD per message, XREAD BLOCK: received ${received} of ${total}, ` +
      `latency p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, max ${s.maxMs} ms`,
  );
  client.close();
  reader.close();
}

main().catch((err: unknown) => {
  console.error("peer-redis failed:", err);
  process.exitCode = 1;
});
