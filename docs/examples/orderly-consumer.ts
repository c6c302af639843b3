/**
 * Example: orderly consumption. Five orders, each created, paid and shipped, are sent to the queue their
 * id hashes to (SelectMessageQueueByHash); an orderly PushConsumer gets each order's steps in that order,
 * one queue held by one consumer of the group at a time (broker locks). The first "paid" message is
 * suspended once (SUSPEND_CURRENT_QUEUE_A_MOMENT) and comes again a second later, still before "shipped".
 * Run it next to `npm run dev`: `npx tsx docs/examples/orderly-consumer.ts`.
 */
import { Message, NimbusApi, Producer, PushConsumer, SelectMessageQueueByHash } from "../../lib/client/index.js";

const endpoints = process.env.NIMBUS_URL ?? "http://127.0.0.1:9876";
// A send by key needs the topic's route: create the topic first (as `nimbus updateTopic -t OrderTopic -r 4 -w 4`).
await new NimbusApi({ endpoints }).updateTopic("OrderTopic", { readQueueNums: 4, writeQueueNums: 4 });
const producer = new Producer({ producerGroup: "ExampleOrderProducer", endpoints });
await producer.start();
const orders = ["order-1", "order-2", "order-3", "order-4", "order-5"];
for (const step of ["created", "paid", "shipped"]) {
  for (const id of orders) {
    await producer.send(new Message("OrderTopic", "TagA", id, step), new SelectMessageQueueByHash(), id);
  }
}
await producer.shutdown();

const consumer = new PushConsumer({
  consumerGroup: "ExampleOrderlyGroup",
  endpoints,
  consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
});
consumer.subscribe("OrderTopic", "*");
let received = 0;
let suspended = false;
const done = new Promise<void>((resolve) => {
  consumer.registerMessageListenerOrderly(async (msgs, context) => {
    for (const m of msgs) {
      if (m.bodyText === "paid" && !suspended) {
        suspended = true;
        console.log(`${m.keys.join(" ")} paid: suspended, again in ${context.suspendCurrentQueueTimeMillis} ms`);
        return "SUSPEND_CURRENT_QUEUE_A_MOMENT";
      }
      console.log(`${m.keys.join(" ")} ${m.bodyText} (reconsumeTimes ${m.reconsumeTimes})`);
    }
    received += msgs.length;
    if (received >= orders.length * 3) resolve();
    return "SUCCESS";
  });
});
await consumer.start();
await done;
await consumer.shutdown(); // commits, releases and unlocks the queues, and leaves the group
