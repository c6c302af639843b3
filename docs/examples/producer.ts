/**
 * Example: a Producer sending ten tagged messages round robin, a batch, and an ordered message.
 * Run it next to `npm run dev`: `npx tsx docs/examples/producer.ts`. In an app, import from "nimbus-mq/client".
 */
import { Message, Producer, SelectMessageQueueByHash } from "../../lib/client/index.js";

const producer = new Producer({
  producerGroup: "ExampleProducerGroup",
  endpoints: process.env.NIMBUS_URL ?? "http://127.0.0.1:9876",
});
await producer.start();
for (let i = 0; i < 10; i++) {
  const result = await producer.send(
    new Message("TopicTest", i % 2 === 0 ? "TagA" : "TagB", `key-${i}`, `Hello Nimbus ${i}`),
  );
  console.log(
    `${result.sendStatus} ${result.msgId} ${result.messageQueue.brokerName}/${result.messageQueue.queueId}@${result.queueOffset}`,
  );
}
const batch = await producer.send([
  new Message("TopicTest", "TagA", "batch 1"),
  new Message("TopicTest", "TagA", "batch 2"),
]);
console.log(`batch of 2 at offset ${batch.queueOffset}`);
const ordered = await producer.send(
  new Message("TopicTest", "TagC", "order-42", "created"),
  new SelectMessageQueueByHash(),
  "order-42",
);
console.log(`order-42 goes to ${ordered.messageQueue.brokerName}/${ordered.messageQueue.queueId}`);
await producer.shutdown();
