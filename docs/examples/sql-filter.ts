/**
 * Example: SQL92 filters (RocketMQ's MessageSelector.bySql). A producer sends orders with an `amount` and a
 * `region` property; a consumer subscribed with `amount >= 100 AND region = 'eu'` receives only those, and an
 * order without `amount` never matches. Run it next to `npm run dev`: `npx tsx docs/examples/sql-filter.ts`.
 */
import { LitePullConsumer, Message, MessageSelector, Producer } from "../../lib/client/index.js";

const endpoints = process.env.NIMBUS_URL ?? "http://127.0.0.1:9876";
const topic = "FilterTopic";

const producer = new Producer({ producerGroup: "ExampleFilterProducer", endpoints });
await producer.start();
const orders = [
  { id: "order-1", amount: "50", region: "eu" },
  { id: "order-2", amount: "150", region: "eu" },
  { id: "order-3", amount: "250", region: "us" },
  { id: "order-4", amount: "300", region: "eu" },
  { id: "order-5", region: "eu" }, // no amount: a comparison with it is unknown, never delivered
];
for (const order of orders) {
  const msg = new Message(topic, "Order", order.id);
  if (order.amount !== undefined) msg.putUserProperty("amount", order.amount);
  msg.putUserProperty("region", order.region);
  await producer.send(msg);
}
await producer.shutdown();

const consumer = new LitePullConsumer({
  consumerGroup: "ExampleFilterGroup",
  endpoints,
  consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
});
consumer.subscribe(topic, MessageSelector.bySql("amount >= 100 AND region = 'eu'"));
await consumer.start();
const received: string[] = [];
for (let round = 0; round < 20 && received.length < 2; round++) {
  for (const m of await consumer.poll(1000)) {
    received.push(m.bodyText);
    console.log(`${m.bodyText} amount=${m.properties.amount} region=${m.properties.region}`);
  }
}
await consumer.shutdown();

try {
  MessageSelector.bySql("amount >"); // a selector is only text until subscribe compiles it
  new LitePullConsumer({ consumerGroup: "ExampleFilterGroup2", endpoints }).subscribe(
    topic,
    MessageSelector.bySql("amount >"),
  );
} catch (err) {
  console.log(`refused: ${(err as Error).message}`);
}
