/**
 * Example: a LitePullConsumer polling TopicTest and committing by hand, until ten messages have come.
 * Run it next to `npm run dev`: `npx tsx docs/examples/lite-pull-consumer.ts`.
 */
import { LitePullConsumer } from "../../lib/client/index.js";

const consumer = new LitePullConsumer({
  consumerGroup: "ExampleLitePullGroup",
  endpoints: process.env.NIMBUS_URL ?? "http://127.0.0.1:9876",
  consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
  autoCommit: false,
});
consumer.subscribe("TopicTest", "*");
await consumer.start();
let received = 0;
for (let round = 0; round < 20 && received < 10; round++) {
  const msgs = await consumer.poll(1000);
  for (const m of msgs) console.log(`${m.brokerName}/${m.queueId}@${m.queueOffset} ${m.bodyText}`);
  received += msgs.length;
  await consumer.commitSync();
}
await consumer.shutdown();
