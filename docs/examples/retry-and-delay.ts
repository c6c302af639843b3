/**
 * Example: retries, a dead letter and delayed messages. A PushConsumer of group ExampleRetryGroup fails
 * "flaky" twice (RECONSUME_LATER: the broker keeps it in %RETRY%ExampleRetryGroup and delivers it again
 * after delay level 3 + reconsumeTimes) and "poison" always (after maxReconsumeTimes it lands in
 * %DLQ%ExampleRetryGroup); a producer sends one message with delay level 2 and one with a deliver time 3 s
 * ahead. Run it next to `npm run dev -- --message-delay-level "1s 2s 2s"` (short levels for a quick run):
 * `npx tsx docs/examples/retry-and-delay.ts`.
 */
import { Message, NimbusApi, Producer, PushConsumer } from "../../lib/client/index.js";

const endpoints = process.env.NIMBUS_URL ?? "http://127.0.0.1:9876";
const api = new NimbusApi({ endpoints });
await api.updateTopic("RetryTopic", { readQueueNums: 1, writeQueueNums: 1 });

const consumer = new PushConsumer({
  consumerGroup: "ExampleRetryGroup",
  endpoints,
  consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
  maxReconsumeTimes: 2, // the third failure sends a message to %DLQ%ExampleRetryGroup
  pullIdleBackoffMaxMillis: 500, // an idle queue (the retry topic's) is polled at least every 0.5 s
});
consumer.subscribe("RetryTopic", "*"); // %RETRY%ExampleRetryGroup is subscribed automatically
let done = 0;
const finished = new Promise<void>((resolve) => {
  consumer.registerMessageListener((msgs) => {
    const m = msgs[0];
    if (m === undefined) return "CONSUME_SUCCESS";
    console.log(`${m.bodyText} delivered, reconsumeTimes ${m.reconsumeTimes}`);
    if (m.bodyText === "poison" || (m.bodyText === "flaky" && m.reconsumeTimes < 2)) return "RECONSUME_LATER";
    if (++done === 3) resolve(); // flaky (third try), the delayed one and the timer one
    return "CONSUME_SUCCESS";
  });
});
await consumer.start();

const producer = new Producer({ producerGroup: "ExampleRetryProducer", endpoints });
await producer.start();
await producer.send(new Message("RetryTopic", "flaky"));
await producer.send(new Message("RetryTopic", "poison"));
const delayed = new Message("RetryTopic", "delayed by level 2");
delayed.setDelayTimeLevel(2);
const timer = new Message("RetryTopic", "timer in 3 s");
timer.setDeliverTimeMs(Date.now() + 3000);
for (const msg of [delayed, timer]) {
  const sent = await producer.send(msg);
  console.log(`${msg.msgId} waits until ${new Date(sent.deliverTimeMs ?? 0).toISOString()}`);
}
await finished;

// The poison message ends in the dead-letter queue after its third failure.
for (;;) {
  const dlq = await api.topicStatus("%DLQ%ExampleRetryGroup").catch(() => []);
  if (dlq.some((q) => q.maxOffset > 0)) break;
  await new Promise((resolve) => setTimeout(resolve, 200));
}
console.log("poison is in %DLQ%ExampleRetryGroup (nimbus resendDlqMsg sends it back)");
await producer.shutdown();
await consumer.shutdown();
