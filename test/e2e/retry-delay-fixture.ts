import { afterEach } from "node:test";
import type { PushConsumerOptions } from "../../lib/client/consumer/consumer-options.js";
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import type { MessageExt } from "../../lib/client/message.js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { fastTimings } from "../support/consumer-helpers.js";
import { type ServerMode, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

/** Level 1 is 1 s, level 2 and 3 (retries: 3 + reconsumeTimes, clamped to the last) are 2 s. */
export const FAST_DELAY_LEVELS = "1s 2s 2s";
export const WAIT_MS = 90_000;

export interface Delivery {
  msgId: string;
  topic: string;
  body: string;
  reconsumeTimes: number;
  properties: Record<string, string>;
}

export function retryDelayFixture(mode: ServerMode) {
  const ctx = useTestServer(mode, { messageDelayLevel: FAST_DELAY_LEVELS });
  const open: PushConsumer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown()));
  });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });

  function consumer(
    group: string,
    topic: string,
    listen: (m: MessageExt) => "CONSUME_SUCCESS" | "RECONSUME_LATER",
    extra: Partial<PushConsumerOptions> = {},
  ): PushConsumer {
    const c = new PushConsumer({
      consumerGroup: group,
      endpoints: ctx.server.url,
      timeoutMs: TEST_TIMEOUT_MS,
      consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
      ...fastTimings(),
      ...extra,
    });
    c.subscribe(topic, "*");
    c.registerMessageListener((msgs) =>
      msgs.some((m) => listen(m) === "RECONSUME_LATER") ? "RECONSUME_LATER" : "CONSUME_SUCCESS",
    );
    open.push(c);
    return c;
  }

  const record = (m: MessageExt): Delivery => ({
    msgId: m.msgId,
    topic: m.topic,
    body: m.bodyText,
    reconsumeTimes: m.reconsumeTimes,
    properties: { ...m.properties },
  });

  /** A listener that records each delivery into `seen` and answers `status`. */
  const recordingInto =
    (seen: Delivery[], status: "CONSUME_SUCCESS" | "RECONSUME_LATER") =>
    (m: MessageExt): typeof status => {
      seen.push(record(m));
      return status;
    };

  async function sendOne(topic: string, body: string): Promise<string> {
    const res = await api().send({
      topic,
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode(body), tags: "T", keys: ["k1"], properties: { color: "red" } }],
    });
    return res.msgIds[0] as string;
  }

  const committed = async (group: string, topic: string) => (await api().queryOffsets(group, topic))[0]?.offset ?? -1;
  return { ctx, api, consumer, record, recordingInto, sendOne, committed };
}

export type RetryDelayFixture = ReturnType<typeof retryDelayFixture>;
