/**
 * @module A subscription's HTTP target for tests: a plain `node:http` server on a free loopback port that checks
 * every delivery's signature with the SDK's `verifyDeliverySignature`, records each delivery (its records and
 * how many deliveries were in flight then, overall and per queue), and answers what the test's `answer` says:
 * a status and a JSON body, or `"hold"` (no answer at all: the dispatcher's timeout path). `close()` drops held
 * and idle connections, so a test file exits on its own.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type NimbusRecord, verifyDeliverySignature } from "../../lib/client/index.js";

/** A delivered record as any HTTP stack reads it: the SDK's `NimbusRecord` (the shape). */
export type TargetRecord = NimbusRecord;

export interface TargetDelivery {
  records: TargetRecord[];
  /** The record bodies, decoded from base64. */
  bodies: string[];
  signatureValid: boolean;
}

export type TargetAnswer = { status: number; body?: unknown } | "hold";

export interface WebhookTarget {
  readonly url: string;
  readonly deliveries: TargetDelivery[];
  /** Most deliveries in flight at once, overall and of one queue (`brokerName:queueId`). */
  readonly maxInFlight: number;
  readonly maxInFlightPerQueue: number;
  close(): Promise<void>;
}

/** Bound of what a test target keeps: a test sends a few dozen messages. */
const MAX_KEPT_DELIVERIES = 1000;

export async function startWebhookTarget(
  secret: string,
  answer: (delivery: TargetDelivery) => TargetAnswer,
): Promise<WebhookTarget> {
  const deliveries: TargetDelivery[] = [];
  const held: ServerResponse[] = [];
  const inFlightOf = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  let maxInFlightPerQueue = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const { Records: records } = JSON.parse(raw.toString("utf8")) as { Records: TargetRecord[] };
      const delivery: TargetDelivery = {
        records,
        bodies: records.map((r) => Buffer.from(r.body, "base64").toString("utf8")),
        signatureValid: verifyDeliverySignature(secret, raw, req.headers["x-nimbus-signature"] as string).valid,
      };
      if (deliveries.length < MAX_KEPT_DELIVERIES) deliveries.push(delivery);
      const queues = [...new Set(records.map((r) => `${r.brokerName}:${r.queueId}`))];
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      for (const q of queues) {
        inFlightOf.set(q, (inFlightOf.get(q) ?? 0) + 1);
        maxInFlightPerQueue = Math.max(maxInFlightPerQueue, inFlightOf.get(q) ?? 0);
      }
      res.on("close", () => {
        inFlight--;
        for (const q of queues) inFlightOf.set(q, (inFlightOf.get(q) ?? 1) - 1);
      });
      const verdict = delivery.signatureValid ? answer(delivery) : { status: 401 };
      if (verdict === "hold") {
        held.push(res);
        return;
      }
      res.writeHead(verdict.status, { "content-type": "application/json" });
      res.end(verdict.body === undefined ? "" : JSON.stringify(verdict.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    get maxInFlight() {
      return maxInFlight;
    },
    get maxInFlightPerQueue() {
      return maxInFlightPerQueue;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `batchItemFailures` naming the records whose body is in `bodies`: SQS's partial batch answer. */
export function failItems(delivery: TargetDelivery, bodies: ReadonlySet<string>): { status: number; body: unknown } {
  const failed = delivery.records.filter((_, i) => bodies.has(delivery.bodies[i] ?? ""));
  return { status: 200, body: { batchItemFailures: failed.map((r) => ({ itemIdentifier: r.messageId })) } };
}
