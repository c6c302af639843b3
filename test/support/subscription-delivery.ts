/**
 * @module What the subscription delivery tests share: a test server (`useTestServer`) with its in-process
 * dispatcher trusting the test certificate (`targetCaPem`), HTTPS test targets with that certificate (plain HTTP
 * when asked, or when openssl is missing outside CI: test-certificate.ts), a producer of the SDK, subscriptions PUT over HTTP, bounded waits that fail with the dispatcher's
 * totals and last errors, and the dead-letter queue read back by a pull.
 */
import { after, before } from "node:test";
import { ROUTES_TABLE } from "../../lib/broker/store/index.js";
import { Message, MessageQueue, Producer } from "../../lib/client/index.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import type { NimbusConfigInput } from "../../lib/config/nimbus-config.js";
import { dlqTopic } from "../../lib/core/names.js";
import type { LocalServer } from "../../lib/dev/local-server.js";
import { SubscriptionDefinitionSchema } from "../../lib/protocol/index.js";
import { createTopic, waitUntil } from "./consumer-helpers.js";
import { ok, text } from "./http.js";
import { dispatchOf, type ServerMode, uniqueName, useTestServer } from "./server-fixture.js";
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
  /**
   * A new topic of `queues` queues and a new group (named from `groupPrefix`) subscribed to it, delivering to
   * `target` (signed with SECRET), with the definition's other `fields`.
   */
  subscribed(
    target: { url: string },
    queues: number,
    fields?: Record<string, unknown>,
    groupPrefix?: string,
  ): Promise<{ topic: string; group: string }>;
  /**
   * Stores a subscription as an earlier version did, past today's save: its secret in clear in the definition, its
   * target's address unchecked (as one saved before the stage narrowed its targets). Then fixes the group's start
   * on the topic, as a save does. No hint reads it within SUBSCRIPTION_LIST_REUSE_MS of a list read before it:
   * `server.dispatch.wakeAll()` wakes it.
   */
  storeUnchecked(group: string, definition: Record<string, unknown>): Promise<void>;
  /** Sends each body to queue `queueId` of the topic, one request each, in order; answers their message ids. */
  send(topic: string, bodies: readonly string[], queueId?: number): Promise<string[]>;
  /**
   * Sends the bodies as one batch (one request, one append, consecutive offsets on one queue), each with the
   * properties `propertiesOf` gives it (a message group, for one).
   */
  sendBatch(
    topic: string,
    bodies: readonly string[],
    propertiesOf?: (body: string) => Record<string, string>,
  ): Promise<void>;
  /**
   * Waits (bounded) until `condition` holds; on timeout fails naming `what` (read then, when a function), the
   * totals and the last errors.
   */
  until(condition: () => boolean | Promise<boolean>, what: string | (() => string)): Promise<void>;
  /** The bodies in `%DLQ%<group>` (read by a pull from offset 0 of each of its queues). */
  deadLetters(group: string): Promise<string[]>;
  totals(): { delivered: number; acked: number; retried: number; deadLettered: number };
  /** The dispatcher's trace records of traced subscriptions: stored, dropped, failed. */
  traceCounts(): { sent: number; dropped: number; failed: number };
  /** The test server's URL (for SDK clients of the test's own). */
  readonly url: string;
  /** The test server itself: its storage, broker and in-process dispatch. */
  readonly server: LocalServer;
}

const WAIT_MS = 60_000;

/** `config`: the server's, beyond the defaults (`nimbus dev`'s: targets may be on loopback). */
export function useDeliveryFixture(mode: ServerMode, config?: NimbusConfigInput): DeliveryFixture {
  const ctx = useTestServer(mode, config, testCertificate && { targetCaPem: testCertificate.cert });
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
  const dispatch = () => dispatchOf(ctx.server.server);
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
    async subscribed(target, queues, fields = {}, groupPrefix = "SubGroup") {
      const topic = await this.topic(queues);
      const group = uniqueName(groupPrefix);
      await this.subscribe(group, { topic, target: httpTarget(target.url), ...fields });
      return { topic, group };
    },
    async storeUnchecked(group, definition) {
      const parsed = SubscriptionDefinitionSchema.parse(definition);
      const { storage, context } = ctx.server.server;
      const item = { pk: "subscriptions", sk: group, definition: JSON.stringify(parsed), createdAt: 1, updatedAt: 1 };
      await storage.table(ROUTES_TABLE).put(item);
      await context.broker.pop.start(group, parsed.topic);
    },
    async send(topic, bodies, queueId = 0) {
      const ids: string[] = [];
      for (const body of bodies)
        ids.push((await started().send(new Message(topic, "TagA", body), queueOf(topic, queueId))).msgId);
      return ids;
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
        await waitUntil(condition, typeof what === "string" ? what : "(below)", WAIT_MS, 25);
      } catch (err) {
        const state = JSON.stringify({ totals: dispatch().totals, errors: dispatch().errors });
        // A function says what was waited for as it stands when the wait failed.
        const now = typeof what === "string" ? "" : ` ${what()}`;
        throw new Error(`${(err as Error).message}${now}; dispatcher: ${state}`);
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
    get server() {
      return ctx.server.server;
    },
  };
}

const queueOf = (topic: string, queueId: number) => new MessageQueue(topic, "broker-a", queueId);

/** The http target of a subscription definition. */
export const httpTarget = (url: string) => ({ type: "http", url, secret: SECRET });
