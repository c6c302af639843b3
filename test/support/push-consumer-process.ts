/**
 * @module A push consumer process for the handover tests: group argv[3], topic argv[4] on the API at
 * argv[2], the scenario's settings (one listener call at a time, ~8 ms per message, membership read every
 * 1 s). Reports `{ clientId }` once started, `{ delivered: [msgId, ...] }` per listener call, and on the
 * message "shutdown" shuts down cleanly and reports `{ stopped: duplicatesDelivered }` before exiting.
 * The parent may instead kill it with SIGKILL (a crash).
 */
import { PushConsumer } from "../../lib/client/consumer/push-consumer.js";
import { consumerProcessArgs, forkedConsumerOptions } from "./consumer-process.js";

const args = consumerProcessArgs("push-consumer-process.ts");
const { topic, send } = args;
const consumer = new PushConsumer(
  forkedConsumerOptions(args, { consumeThreadMax: 1, membershipPollInterval: 1000, handoverGraceMillis: 30_000 }),
);
consumer.subscribe(topic, "*");
consumer.registerMessageListener(async (msgs) => {
  await new Promise((resolve) => setTimeout(resolve, 8 * msgs.length));
  send({ delivered: msgs.map((m) => m.msgId) });
  return "CONSUME_SUCCESS" as const;
});
process.on("message", (m) => {
  if (m !== "shutdown") return;
  void consumer.shutdown().then(() => send({ stopped: consumer.duplicatesDelivered }, () => process.exit(0)));
});
await consumer.start();
send({ clientId: consumer.clientId });
// Runs until told to stop or killed (the consumer's timers are unref'd: this keeps the process alive).
setInterval(() => {}, 1 << 30);
