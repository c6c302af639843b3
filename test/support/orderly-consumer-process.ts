/**
 * @module An orderly push consumer process for the lock tests: group argv[3], topic argv[4] on the API at
 * argv[2], short timings (membership read every 200 ms, locks renewed every 300 ms, heartbeats every
 * 300 ms so consumerStatus is fresh), ~50 ms per message. Reports `{ clientId }` once started and
 * `{ processed: { queue, offset, at } }` as each listener call begins (`at`: this process's clock, the
 * same machine's as the test's). The parent pauses it with SIGSTOP/SIGCONT and ends it with SIGKILL.
 */
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { consumerProcessArgs, forkedConsumerOptions, ORDERLY_TEST_TIMINGS } from "./consumer-process.js";

const args = consumerProcessArgs("orderly-consumer-process.ts");
const { topic, send } = args;
const consumer = new PushConsumer(forkedConsumerOptions(args, ORDERLY_TEST_TIMINGS));
consumer.subscribe(topic, "*");
consumer.registerMessageListenerOrderly(async (msgs, context) => {
  const first = msgs[0];
  if (first !== undefined)
    send({ processed: { queue: context.messageQueue.key(), offset: first.queueOffset, at: Date.now() } });
  await new Promise((resolve) => setTimeout(resolve, 50 * msgs.length));
  return "SUCCESS" as const;
});
await consumer.start();
send({ clientId: consumer.clientId });
setInterval(() => {}, 1 << 30);
