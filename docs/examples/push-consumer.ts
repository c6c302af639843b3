/**
 * Example: a PushConsumer of group ExampleConsumerGroup reading TagA and TagB from the first offset,
 * stopping after ten messages. Run it next to `npm run dev`: `npx tsx docs/examples/push-consumer.ts`.
 */
import { PushConsumer } from "../../lib/client/index.js";

const consumer = new PushConsumer({
  consumerGroup: "ExampleConsumerGroup",
  endpoints: process.env.NIMBUS_URL ?? "http://127.0.0.1:9876",
  consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
});
consumer.subscribe("TopicTest", "TagA || TagB");
let received = 0;
const done = new Promise<void>((resolve) => {
  consumer.registerMessageListener((msgs) => {
    for (const m of msgs) console.log(`${m.brokerName}/${m.queueId}@${m.queueOffset} ${m.tags} ${m.bodyText}`);
    received += msgs.length;
    if (received >= 10) resolve();
    return "CONSUME_SUCCESS";
  });
});
await consumer.start();
await done;
await consumer.shutdown(); // commits the offsets and leaves the group
