/**
 * @module `npm run bench -- --suite peer`: the table to compare Nimbus with Redis Streams or NATS on one
 * machine (docs/benchmarks/peer.md). Through the SDK's `NimbusApi`, 1 KiB messages: produce
 * in batches of 32 with one batch in flight, consume with one pull of 32 in flight, produce at batch 1
 * (for CPU per message), and end-to-end at a fixed 2,000 msg/s with one message per send. In-process
 * servers (the embedded store, or the AWS adapters on dynalite + s3rver) also report storage requests per
 * message; `--url` measures an external server (`npm run dev`) instead.
 */
import { randomBytes } from "node:crypto";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { LocalServer } from "../../lib/dev/local-server.js";
import { consumePhase, type EndToEndResult, endToEndPhase, type PeerPhase, producePhase } from "./peer-phases.js";
import { fmt, RATE_HEADERS, rateCells, table } from "./report.js";

export interface PeerOptions {
  bodyBytes: number;
  /** Seconds per produce phase. */
  seconds: number;
  /** Offered rate and duration of the end-to-end phase. */
  rate: number;
  e2eSeconds: number;
  batch: number;
  queues: number;
}

export interface PeerResult {
  description: string;
  produce32: PeerPhase;
  consume32: PeerPhase;
  produce1: PeerPhase;
  consume1: PeerPhase;
  intact: boolean;
  endToEnd: EndToEndResult;
}

const BROKER = "broker-a";

async function createTopic(api: NimbusApi, topic: string, queues: number): Promise<void> {
  await api.updateTopic(topic, { readQueueNums: queues, writeQueueNums: queues, brokerNames: [BROKER] });
}

/** Runs the peer table's phases against `url` (a server of this process when `server` is given). */
export async function runPeerTable(
  url: string,
  server: LocalServer | undefined,
  description: string,
  o: PeerOptions,
  runId: string,
): Promise<PeerResult> {
  const api = new NimbusApi({ endpoints: url, timeoutMs: 30_000 });
  const body = randomBytes(o.bodyBytes);
  const t32 = `Peer${runId}B${o.batch}`;
  const t1 = `Peer${runId}B1`;
  const tE = `Peer${runId}E2E`;
  await createTopic(api, t32, o.queues);
  await createTopic(api, t1, o.queues);
  await createTopic(api, tE, 1);
  // Warm-up: routes learned, connections open, the queues' tails cached (as a running producer has).
  await producePhase(api, server, t1, 1, body, 0.3);
  await server?.context.broker.registerBrokers();
  const p32 = await producePhase(api, server, t32, o.batch, body, o.seconds);
  const c32 = await consumePhase(api, server, t32, p32.ends, o.batch, o.bodyBytes);
  await server?.context.broker.registerBrokers();
  const p1 = await producePhase(api, server, t1, 1, body, o.seconds);
  const c1 = await consumePhase(api, server, t1, p1.ends, 32, o.bodyBytes);
  await server?.context.broker.registerBrokers();
  const endToEnd = await endToEndPhase(api, tE, BROKER, o.rate, o.e2eSeconds, o.bodyBytes);
  return {
    description,
    produce32: p32.phase,
    consume32: c32.phase,
    produce1: p1.phase,
    consume1: c1.phase,
    intact: c32.intact && c1.intact,
    endToEnd,
  };
}

export function formatPeerTable(r: PeerResult, o: PeerOptions): string {
  const e = r.endToEnd;
  const rows = [
    ["phase", "msgs", "calls", ...RATE_HEADERS, "reads/msg", "writes/msg", "PUT/msg", "GET/msg"],
    ...(
      [
        [`produce, batch ${o.batch}, 1 in flight`, r.produce32],
        [`consume, pull ${o.batch}, 1 in flight`, r.consume32],
        ["produce, batch 1, 1 in flight", r.produce1],
        ["consume, pull 32, 1 in flight", r.consume1],
      ] as const
    ).map(([name, p]) => [
      name,
      String(p.messages),
      String(p.calls),
      ...rateCells(p),
      fmt(p.perMessage?.tableReads),
      fmt(p.perMessage?.tableWrites),
      fmt(p.perMessage?.s3Puts),
      fmt(p.perMessage?.s3Gets),
    ]),
  ];
  const e2e =
    `end-to-end at ${e.offeredPerSec} msg/s for ${e.seconds} s, one message per send: ` +
    `${e.sustained ? "SUSTAINED" : "NOT SUSTAINED"}, sent ${e.sent} (${fmt(e.sentPerSec)}/s), received ${e.received} ` +
    `(${fmt(e.receivedPerSec)}/s), latency p50 ${fmt(e.latency.p50Ms)} ms, p99 ${fmt(e.latency.p99Ms)} ms, ` +
    `max ${fmt(e.latency.maxMs)} ms, CPU ${fmt(e.cpuUsPerMsg)} µs/msg` +
    (e.sendErrors > 0 ? `, ${e.sendErrors} SEND ERRORS` : "");
  const notes = r.intact ? [] : ["note: INCOMPLETE: a message was not read back in order (see stderr)"];
  return [`\n## ${r.description}\n`, table(rows), e2e, ...notes].join("\n");
}
