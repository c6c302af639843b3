/**
 * @module What the subscription delivery tests share: a test server (`useTestServer`) with its in-process
 * dispatcher trusting the test certificate (`targetCaPem`), HTTPS test targets with that certificate (plain HTTP
 * when asked, or when openssl is missing outside CI: test-certificate.ts), a producer of the SDK, subscriptions PUT over HTTP, bounded waits that fail with the dispatcher's
 * totals and last errors, and the dead-letter queue read back by a pull.
 */
import { after, before } from "node:test";
import { Message, MessageQueue, Producer } from "../../lib/client/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { dlqTopic } from "../../lib/core/names.js";
import { createTopic, waitUntil } from "./consumer-helpers.js";
import { ok, text } from "./http.js";
import { type ServerMode, uniqueName, useTestServer } from "./server-fixture.js";
import { testCertificate } from "./test-certificate.js";
import { TEST_TIMEOUT_MS } from "./timeouts.js";
import { startWebhookTarget, type TargetAnswer, type TargetDelivery, type WebhookTarget } from "./webhook-target.js";

export const SECRET = "whsec-subscription-delivery-0123";
/** The smallest backoff a subscription takes (1 s): retries come after it, POP's redelivery grace added. */
export const FAST_RETRY = { initialMs: 1000, maxMs: 1000 };

/** What the test targets are served over: HTTPS with the test certificate, or HTTP without openssl (not in CI). */
export const TARGET_SCHEME = testCertificate === undefined ? "http" : "https";

export interface DeliveryFixture {
  /**
   * A test target answering `answer`: HTTPS with the certificate the server trusts (`scheme: "http"`: plain HTTP;
   * `tls`: another certificate, one the server does not trust).
   */
  target(
    answer: (delivery: TargetDelivery) => TargetAnswer | Promise<TargetAnswer>,
    options?: { scheme?: "http"; tls?: { cert: Buffer; key: Buffer } },
  ): Promise<WebhookTarget>;
  /** A new topic with `queues` queues on broker-a. */
  topic(queues: number): Promise<string>;
  subscribe(group: string, definition: Record<string, unknown>): Promise<void>;
  /** Sends each body to queue `queueId` of the topic, one request each, in order. */
  send(topic: string, bodies: readonly string[], queueId?: number): Promise<void>;
  /**
   * Sends the bodies as one batch (one request, one append, consecutive offsets on one queue), each with the
   * properties `propertiesOf` gives it (a message group, for one).
   */
  sendBatch(
    topic: string,
    bodies: readonly string[],
    propertiesOf?: (body: string) => Record<string, string>,
  ): Promise<void>;
  /** Waits (bounded) until `condition` holds; on timeout fails naming `what`, the totals and the last errors. */
  until(condition: () => boolean | Promise<boolean>, what: string): Promise<void>;
  /** The bodies in `%DLQ%<group>` (read by a pull from offset 0 of each of its queues). */
  deadLetters(group: string): Promise<string[]>;
  totals(): { delivered: number; acked: number; retried: number; deadLettered: number };
  /** The dispatcher's trace records of traced subscriptions: stored, dropped, failed. */
  traceCounts(): { sent: number; dropped: number; failed: number };
  /** The test server's URL (for SDK clients of the test's own). */
  readonly url: string;
}

const WAIT_MS = 60_000;

export function useDeliveryFixture(mode: ServerMode): DeliveryFixture {
  const ctx = useTestServer(mode, undefined, testCertificate && { targetCaPem: testCertificate.cert });
  let producer: Producer | undefined;
  before(async () => {
    producer = new Producer({
      producerGroup: uniqueName("SubProducer"),
      endpoints: ctx.server.url,
      sendMsgTimeout: TEST_TIMEOUT_MS,
    });
    await producer.start();
  });
  after(async () => {
    await producer?.shutdown();
  });
  const started = (): Producer => {
    if (producer === undefined) throw new Error("the producer is not started (use it inside tests)");
    return producer;
  };
  const dispatch = () => ctx.server.server.dispatch;
  return {
    target: (answer, options = {}) =>
      startWebhookTarget(SECRET, answer, {
        tls: options.scheme === "http" ? undefined : (options.tls ?? testCertificate),
      }),
    async topic(queues) {
      const name = uniqueName("SubTopic");
      const api = new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
      await createTopic(api, name, queues, ["broker-a"]);
      return name;
    },
    async subscribe(group, definition) {
      ok(await ctx.http.put(`/subscriptions/${group}`, definition));
    },
    async send(topic, bodies, queueId = 0) {
      for (const body of bodies) await started().send(new Message(topic, "TagA", body), queueOf(topic, queueId));
    },
    async sendBatch(topic, bodies, propertiesOf) {
      const messages = bodies.map((body) => {
        const m = new Message(topic, "TagA", body);
        for (const [k, v] of Object.entries(propertiesOf?.(body) ?? {})) m.putUserProperty(k, v);
        return m;
      });
      await started().send(messages, queueOf(topic, 0));
    },
    async until(condition, what) {
      try {
        await waitUntil(condition, what, WAIT_MS, 25);
      } catch (err) {
        const state = JSON.stringify({ totals: dispatch().totals, errors: dispatch().errors });
        throw new Error(`${(err as Error).message}; dispatcher: ${state}`);
      }
    },
    async deadLetters(group) {
      const answer = await ctx.http.get<{ queues: { brokerName: string; queueId: number }[] }>(
        `/topics/${encodeURIComponent(dlqTopic(group))}/status`,
      );
      if (answer.status === 404) return [];
      const bodies: string[] = [];
      for (const q of ok(answer).queues) {
        const pulled = ok(
          await ctx.http.post<{ messages?: { body: string }[] }>("/pull", {
            consumerGroup: uniqueName("DlqReader"),
            topic: dlqTopic(group),
            brokerName: q.brokerName,
            queueId: q.queueId,
            queueOffset: 0,
          }),
        );
        bodies.push(...(pulled.messages ?? []).map((m) => text(m.body)));
      }
      return bodies;
    },
    totals: () => dispatch().totals,
    traceCounts: () => dispatch().traceCounts,
    get url() {
      return ctx.server.url;
    },
  };
}

const queueOf = (topic: string, queueId: number) => new MessageQueue(topic, "broker-a", queueId);

/** The http target of a subscription definition. */
export const httpTarget = (url: string) => ({ type: "http", url, secret: SECRET });
