/**
 * Example: the serverless shape of POP consumption. `handler` is a Lambda function's handler (a scheduled or
 * queue-driven invocation): it receives one batch, processes it and acks what it processed; a message it
 * could not process is simply not acked and comes back after its invisible time with deliveryAttempt + 1
 * (and to %DLQ%<group> past the max attempts). Nothing lives between invocations but the client.
 * Run it next to `npm run dev`: `npx tsx docs/examples/lambda-worker.ts` sends a few jobs and invokes the
 * handler as Lambda would, one invocation at a time, until the queue is drained.
 */
import { fileURLToPath } from "node:url";
import { Message, NimbusApi, Producer, SimpleConsumer } from "../../lib/client/index.js";

const endpoints = process.env.NIMBUS_URL ?? "http://127.0.0.1:9876";
const TOPIC = "JobTopic";

// Created once per container (outside the handler), reused by its invocations.
const consumer = new SimpleConsumer({
  consumerGroup: "ExampleLambdaWorkers",
  endpoints,
  subscriptions: { [TOPIC]: "*" },
  awaitDuration: 1000, // a Lambda is billed while it waits: keep the long poll short
});
let ready: Promise<void> | undefined;

export async function handler(): Promise<{ processed: number; failed: number }> {
  ready ??= consumer.startup();
  await ready;
  // Invisible for 60 s: longer than this function's timeout, so a crash mid-batch redelivers it.
  const batch = await consumer.receive(32, 60_000);
  const processed = batch.filter((m) => new TextDecoder().decode(m.body) !== "bad job");
  const codes = await consumer.ackAll(processed); // one call for the whole batch
  return { processed: codes.filter((c) => c === "OK").length, failed: batch.length - processed.length };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await new NimbusApi({ endpoints }).updateTopic(TOPIC, { readQueueNums: 4, writeQueueNums: 4 });
  await handler(); // the group's first receive sets its start at the end of each queue
  const producer = new Producer({ producerGroup: "ExampleJobProducer", endpoints });
  await producer.start();
  for (let i = 0; i < 10; i++) await producer.send(new Message(TOPIC, `job ${i}`));
  await producer.send(new Message(TOPIC, "bad job"));
  await producer.shutdown();
  let total = 0;
  for (let invocation = 1; total < 10 && invocation <= 20; invocation++) {
    const result = await handler();
    if (result.processed + result.failed > 0) console.log(`invocation ${invocation}: ${JSON.stringify(result)}`);
    total += result.processed;
  }
  console.log(`processed ${total}`);
  await consumer.shutdown();
}
