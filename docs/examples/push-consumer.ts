/**
 * Example: a PushConsumer of group ExampleConsumerGroup reading TagA and TagB of TopicTest from the first
 * offset; it prints the first ten messages it gets and stops (or says how many came if ten do not come in
 * 30 s). Run it next to `npm run dev`, after `npx tsx docs/examples/producer.ts` (which sends them):
 * `npx tsx docs/examples/push-consumer.ts`.
 */
import { PushConsumer } from "../../lib/client/index.js";

const WANTED = 10;
const consumer = new PushConsumer({
  consumerGroup: "ExampleConsumerGroup",
  endpoints: process.env.NIMBUS_URL ?? "http://127.0.0.1:9876",
  consumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
});
consumer.subscribe("TopicTest", "TagA || TagB");
let received = 0;
let timer: NodeJS.Timeout | undefined;
const done = new Promise<void>((resolve) => {
  timer = setTimeout(resolve, 30_000);
  consumer.registerMessageListener((msgs) => {
    for (const m of msgs) {
      // A batch may hold more than we want: the rest are consumed too, but not printed.
      if (received < WANTED) console.log(`${m.brokerName}/${m.queueId}@${m.queueOffset} ${m.tags} ${m.bodyText}`);
      received += 1;
    }
    if (received >= WANTED) resolve();
    return "CONSUME_SUCCESS";
  });
});
await consumer.start();
await done;
clearTimeout(timer);
if (received < WANTED) console.log(`only ${received} of ${WANTED} messages in 30 s (is TopicTest there?)`);
await consumer.shutdown(); // commits the offsets and leaves the group
