/**
 * @module A subscription's target for tests: an HTTPS server (`node:https`, with the certificate given in `tls`)
 * or a plain `node:http` one, on a free loopback port, that checks
 * every delivery's signature with the SDK's `verifyDeliverySignature`, records each delivery (its records and
 * how many deliveries were in flight then, overall, per queue and per message group), and answers what the test's
 * `answer` says, now or later (a promise): a status and a JSON body, or `"hold"` (no answer at all: the
 * dispatcher's timeout path). An HTTPS target also counts the TLS handshakes that failed (a client that does not
 * trust its certificate). `close()` drops held and idle connections, so a test file exits on its own.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { type NimbusRecord, verifyDeliverySignature } from "../../lib/client/index.js";
import { MessageConst } from "../../lib/core/message.js";

/** A delivered record as any HTTP stack reads it: the SDK's `NimbusRecord` (the documented shape). */
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
  /** Most deliveries in flight at once: overall, of one queue (`brokerName:queueId`), of one message group. */
  readonly maxInFlight: number;
  readonly maxInFlightPerQueue: number;
  readonly maxInFlightPerGroup: number;
  /** Deliveries in flight now. */
  readonly inFlight: number;
  /** TLS handshakes that failed (HTTPS only): a dispatcher that refused the certificate sent nothing. */
  readonly tlsClientErrors: number;
  close(): Promise<void>;
}

/** Bound of what a test target keeps: a test sends a few dozen messages. */
const MAX_KEPT_DELIVERIES = 1000;

export interface WebhookTargetOptions {
  /** Serve HTTPS with this certificate and key (PEM); plain HTTP without. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
}

export async function startWebhookTarget(
  secret: string,
  answer: (delivery: TargetDelivery) => TargetAnswer | Promise<TargetAnswer>,
  options: WebhookTargetOptions = {},
): Promise<WebhookTarget> {
  const deliveries: TargetDelivery[] = [];
  const held: ServerResponse[] = [];
  /** In flight per key: `q:<brokerName>:<queueId>` and `g:<message group>`. */
  const inFlightOf = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  let maxInFlightPerQueue = 0;
  let maxInFlightPerGroup = 0;
  let tlsClientErrors = 0;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
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
      const groups = records.flatMap((r) => {
        const group = r.properties[MessageConst.SHARDING_KEY];
        return group === undefined ? [] : [`g:${group}`];
      });
      const keys = [...new Set([...records.map((r) => `q:${r.brokerName}:${r.queueId}`), ...groups])];
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      for (const k of keys) {
        const now = (inFlightOf.get(k) ?? 0) + 1;
        inFlightOf.set(k, now);
        if (k.startsWith("q:")) maxInFlightPerQueue = Math.max(maxInFlightPerQueue, now);
        else maxInFlightPerGroup = Math.max(maxInFlightPerGroup, now);
      }
      res.on("close", () => {
        inFlight--;
        for (const k of keys) inFlightOf.set(k, (inFlightOf.get(k) ?? 1) - 1);
      });
      void Promise.resolve(delivery.signatureValid ? answer(delivery) : { status: 401 }).then((verdict) => {
        if (verdict === "hold") {
          held.push(res);
          return;
        }
        if (res.destroyed) return;
        res.writeHead(verdict.status, { "content-type": "application/json" });
        res.end(verdict.body === undefined ? "" : JSON.stringify(verdict.body));
      });
    });
  };
  const server = options.tls ? createHttpsServer({ ...options.tls }, serve) : createServer(serve);
  server.on("tlsClientError", () => {
    tlsClientErrors++;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${port}/hook`,
    deliveries,
    get maxInFlight() {
      return maxInFlight;
    },
    get maxInFlightPerQueue() {
      return maxInFlightPerQueue;
    },
    get maxInFlightPerGroup() {
      return maxInFlightPerGroup;
    },
    get inFlight() {
      return inFlight;
    },
    get tlsClientErrors() {
      return tlsClientErrors;
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
