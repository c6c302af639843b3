/**
 * Example: a SimpleConsumer (RocketMQ 5's POP consumption) receiving batches of PopTopic, acking each message,
 * and giving one more time with changeInvisibleDuration. Run it next to `npm run dev`:
 * `npx tsx docs/examples/simple-consumer.ts`. In an app, import from "nimbus-mq/client".
 */
import { FilterExpression, Message, NimbusApi, Producer, SimpleConsumer } from "../../lib/client/index.js";

const endpoints = process.env.NIMBUS_URL ?? "http://127.0.0.1:9876";
// The topic (an admin's job; `nimbus updateTopic -t PopTopic -r 4 -w 4` does the same).
await new NimbusApi({ endpoints }).updateTopic("PopTopic", { readQueueNums: 4, writeQueueNums: 4 });
const consumer = new SimpleConsumer({
  consumerGroup: "ExampleSimpleGroup",
  endpoints,
  subscriptions: new Map([["PopTopic", new FilterExpression("TagA || TagB")]]),
  awaitDuration: 2000, // long polling: a receive waits up to 2 s for a message
});
await consumer.startup(); // the group receives what is sent from now on

const producer = new Producer({ producerGroup: "ExampleSimpleProducer", endpoints });
await producer.start();
for (let i = 0; i < 6; i++) await producer.send(new Message("PopTopic", i % 3 === 2 ? "TagC" : "TagA", `job ${i}`));
await producer.shutdown();

let done = 0;
while (done < 4) {
  const messages = await consumer.receive(16, 30_000); // invisible to the group's other consumers for 30 s
  if (messages.length === 0) break;
  for (const m of messages) {
    if (done === 0) await consumer.changeInvisibleDuration(m, 60_000); // a slow one: a minute more
    console.log(`${m.tag} ${new TextDecoder().decode(m.body)} (attempt ${m.deliveryAttempt})`);
    await consumer.ack(m);
    done++;
  }
}
console.log(`acked ${done}`);
await consumer.shutdown();
