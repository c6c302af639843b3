/**
 * Example: RocketMQ 5's official Node.js client (`rocketmq-client-nodejs`) against Nimbus' gRPC endpoint, the
 * first flow of docs/grpc.md: start a SimpleConsumer, send, receive, ack. Run it next to `npm run dev` (gRPC on
 * 127.0.0.1:8081) after `npx nimbus updateTopic -t GrpcTopic`: `npx tsx docs/examples/grpc-first-flow.ts`.
 */
import { Producer, SimpleConsumer } from "rocketmq-client-nodejs";

const endpoints = process.env.NIMBUS_GRPC ?? "127.0.0.1:8081";
// The client logs to ~/logs/rocketmq unless given a logger; this one prints its errors only.
const logger = { info() {}, debug() {}, warn() {}, error: console.error };

const consumer = new SimpleConsumer({
  endpoints,
  namespace: "",
  consumerGroup: "GroupA",
  subscriptions: new Map([["GrpcTopic", "TagA"]]),
  awaitDuration: 2000, // long polling: a receive waits up to 2 s for a message
  logger,
});
await consumer.startup(); // the group receives what is sent from now on, on every queue of the topic

const producer = new Producer({ endpoints, namespace: "", logger });
await producer.startup();
const receipt = await producer.send({ topic: "GrpcTopic", tag: "TagA", keys: ["order-1"], body: Buffer.from("hello") });
console.log(`sent ${receipt.messageId}`);

let mine = false;
while (!mine) {
  for (const message of await consumer.receive(16, 30_000)) {
    console.log(`received ${message.messageId} ${message.tag} ${message.body.toString()}`);
    await consumer.ack(message);
    mine ||= message.messageId === receipt.messageId;
  }
}
await producer.shutdown();
await consumer.shutdown();
