/**
 * @module DynamoDB's per-partition-key throughput limits, in front of an emulator (dynalite and DynamoDB Local
 * never throttle): an HTTP proxy that forwards every request to the emulator and keeps a token bucket per (table,
 * partition key) — 1,000 write units/s and 3,000 read units/s, each bucket holding at most one second of its rate
 * (DynamoDB's burst capacity is a table's, and never lifts one partition past its ceiling). A request whose key's
 * bucket is empty is answered as DynamoDB answers it, HTTP 400 `ProvisionedThroughputExceededException`, without
 * reaching the emulator, so the AWS SDK's throttling back-off and the adapters' retry paths run.
 *
 * Units, as DynamoDB counts them: a put 1 per KB of its item (attribute names and values), an update or delete 1
 * (Nimbus updates counters and small items only), a read 1 per 4 KB returned (consistent; half for eventually
 * consistent reads), at least 1 (0.5). Writes are charged before they are forwarded; reads once the answer says
 * how much they returned (a read that overdraws the bucket makes the next ones wait). Requests without one
 * partition key (scans, batch calls, table management) pass uncounted.
 */
import { Agent, createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { BoundedMap } from "../../lib/core/bounded-map.js";

export interface KeyLimits {
  writeUnitsPerSecond: number;
  readUnitsPerSecond: number;
}

/** DynamoDB's per-partition ceilings. */
export const DYNAMODB_KEY_LIMITS: KeyLimits = { writeUnitsPerSecond: 1000, readUnitsPerSecond: 3000 };

export interface KeyLimitedDynamo {
  endpoint: string;
  /** Requests answered ProvisionedThroughputExceededException so far. */
  throttled(): number;
  /** Of those, reads (gets and queries). */
  throttledReads(): number;
  /** Units charged so far, per kind. */
  charged(): { writeUnits: number; readUnits: number };
  /** Answers the next `n` keyed requests (any key) with the throttle, whatever their buckets hold (tests' paths). */
  throttleNext(n: number): void;
  stop(): Promise<void>;
}

class TokenBucket {
  #tokens: number;
  #at: number;
  constructor(readonly rate: number) {
    this.#tokens = rate;
    this.#at = performance.now();
  }
  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.rate, this.#tokens + ((now - this.#at) / 1000) * this.rate);
    this.#at = now;
  }
  /** Whether a request may go now (the bucket is not overdrawn). */
  open(): boolean {
    this.#refill();
    return this.#tokens > 0;
  }
  take(units: number): void {
    this.#refill();
    this.#tokens -= units;
  }
}

/** The most partition keys tracked; the oldest are forgotten past it (a forgotten key starts with a full bucket). */
const MAX_KEYS = 100_000;

type Json = Record<string, unknown>;

/** The size DynamoDB bills an item by: its attribute names and values, in bytes (close enough for units). */
function itemBytes(item: unknown): number {
  if (item === null || typeof item !== "object") return 0;
  let bytes = 0;
  for (const [name, value] of Object.entries(item as Json)) bytes += Buffer.byteLength(name) + valueBytes(value);
  return bytes;
}

function valueBytes(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const [type, v] = Object.entries(value as Json)[0] ?? ["", undefined];
  if (type === "S") return Buffer.byteLength(String(v));
  if (type === "N") return Math.ceil(String(v).length / 2) + 1;
  if (type === "B") return Math.floor((String(v).length * 3) / 4);
  if (type === "BOOL" || type === "NULL") return 1;
  if (type === "M") return 3 + itemBytes(v);
  if (type === "L" && Array.isArray(v)) return 3 + v.reduce((n: number, x) => n + 1 + valueBytes(x), 0);
  if ((type === "SS" || type === "NS" || type === "BS") && Array.isArray(v)) {
    return v.reduce((n: number, x) => n + Buffer.byteLength(String(x)), 0);
  }
  return 0;
}

/** The partition key's value of a keyed request (`pk` is every Nimbus table's partition key), or undefined. */
function partitionOf(op: string, body: Json): string | undefined {
  const key = (op === "PutItem" ? body.Item : body.Key) as Json | undefined;
  if (key !== undefined) return JSON.stringify((key as Json).pk);
  if (op === "Query") {
    // Nimbus queries say `pk = :pk` (or a named placeholder); the value is the one bound to the pk condition.
    const condition = String(body.KeyConditionExpression ?? "");
    const placeholder = /(?:^|\s|\()(?:pk|#\w+)\s*=\s*(:\w+)/.exec(condition)?.[1];
    const values = body.ExpressionAttributeValues as Json | undefined;
    if (placeholder !== undefined && values?.[placeholder] !== undefined) return JSON.stringify(values[placeholder]);
  }
  return undefined;
}

const WRITES = new Set(["PutItem", "UpdateItem", "DeleteItem"]);
const READS = new Set(["GetItem", "Query"]);

const THROTTLED_BODY = JSON.stringify({
  __type: "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
  message:
    "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.",
});

/** Starts the limiting proxy in front of `upstream` (the emulator's URL) on a free loopback port. */
export async function startKeyLimitedDynamo(
  upstream: string,
  limits: KeyLimits = DYNAMODB_KEY_LIMITS,
): Promise<KeyLimitedDynamo> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const buckets = new BoundedMap<string, { write: TokenBucket; read: TokenBucket }>(MAX_KEYS);
  const bucketsOf = (key: string) => {
    let b = buckets.get(key);
    if (b === undefined) {
      b = { write: new TokenBucket(limits.writeUnitsPerSecond), read: new TokenBucket(limits.readUnitsPerSecond) };
      buckets.set(key, b);
    }
    return b;
  };
  let throttled = 0;
  let throttledReads = 0;
  let forced = 0;
  const charged = { writeUnits: 0, readUnits: 0 };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const op = String(req.headers["x-amz-target"] ?? "").split(".")[1] ?? "";
      let body: Json = {};
      try {
        body = JSON.parse(raw.toString("utf8")) as Json;
      } catch {
        // not JSON: forwarded as it is, the emulator answers it
      }
      const pk = WRITES.has(op) || READS.has(op) ? partitionOf(op, body) : undefined;
      const bucket = pk === undefined ? undefined : bucketsOf(`${String(body.TableName)}\u0000${pk}`);
      const kindBucket = bucket && (WRITES.has(op) ? bucket.write : bucket.read);
      const force = kindBucket !== undefined && forced > 0;
      if (force) forced--;
      if (kindBucket !== undefined && (force || !kindBucket.open())) {
        throttled++;
        if (!WRITES.has(op)) throttledReads++;
        res.writeHead(400, {
          "content-type": "application/x-amz-json-1.0",
          "x-amzn-requestid": `throttled-${throttled}`,
        });
        res.end(THROTTLED_BODY);
        return;
      }
      if (bucket !== undefined && WRITES.has(op)) {
        const units = op === "PutItem" ? Math.max(1, Math.ceil(itemBytes(body.Item) / 1024)) : 1;
        bucket.write.take(units);
        charged.writeUnits += units;
      }
      const forward = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent,
        },
        (up) => {
          const answer: Buffer[] = [];
          up.on("data", (c: Buffer) => answer.push(c));
          up.on("end", () => {
            const bytes = Buffer.concat(answer);
            if (bucket !== undefined && READS.has(op) && (up.statusCode ?? 500) < 300) {
              const units = readUnits(op, body, bytes);
              bucket.read.take(units);
              charged.readUnits += units;
            }
            res.writeHead(up.statusCode ?? 500, up.headers);
            res.end(bytes);
          });
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(raw);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    throttled: () => throttled,
    throttledReads: () => throttledReads,
    charged: () => ({ ...charged }),
    throttleNext: (n) => {
      forced = Math.max(0, Math.min(1_000, Math.floor(n)));
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}

/** Read units of an answer: 1 per 4 KB of the items returned (half when eventually consistent), at least one. */
function readUnits(op: string, request: Json, answer: Buffer): number {
  let bytes = 0;
  try {
    const parsed = JSON.parse(answer.toString("utf8")) as Json;
    if (op === "GetItem") bytes = itemBytes(parsed.Item);
    else if (Array.isArray(parsed.Items)) bytes = parsed.Items.reduce((n: number, item) => n + itemBytes(item), 0);
  } catch {
    bytes = 0;
  }
  const units = Math.max(1, Math.ceil(bytes / 4096));
  return request.ConsistentRead === true ? units : units / 2;
}
