/**
 * @module The Nimbus SDK (`nimbus-mq/client`): RocketMQ's client model over the Nimbus HTTP API.
 *
 * @example
 * import { Message, Producer, PushConsumer } from "nimbus-mq/client";
 * const producer = new Producer({ producerGroup: "pg", endpoints: "http://127.0.0.1:9876" });
 * await producer.start();
 * await producer.send(new Message("TopicTest", "TagA", "Hello"));
 */

export { ErrorCode, NimbusError } from "../core/errors.js";
export { MessageQueue } from "../core/message-queue.js";
export { dlqTopic, retryTopic } from "../core/names.js";
export type { BrokerData, QueueData, TopicRouteData } from "../protocol/index.js";
export * from "./allocate/index.js";
export * from "./api-client.js";
export { buildMQClientId, localIPv4, resolveInstanceName } from "./client-id.js";
export type {
  ConsumeOrderlyContext,
  ConsumeOrderlyStatus,
  MessageListenerOrderly,
} from "./consume-orderly.js";
export {
  FilterExpression,
  type FilterType,
  type MessageView,
  SimpleConsumer,
  type SimpleConsumerOptions,
} from "./consumer/simple-consumer.js";
export type {
  ConsumeConcurrentlyContext,
  ConsumeConcurrentlyStatus,
  ConsumeFromWhere,
  LitePullConsumerOptions,
  MessageListenerConcurrently,
  MessageModel,
  PushConsumerOptions,
} from "./consumer-options.js";
export {
  type Credentials,
  type CredentialsProvider,
  HttpTransport,
  type IamAuth,
  type NimbusCredentials,
  type RequestOptions,
  type TransportOptions,
} from "./http-transport.js";
export { LitePullConsumer } from "./lite-pull-consumer.js";
export { Message, type MessageExt, type PullResult, type SendResult, type SendStatus } from "./message.js";
export {
  type MessageQueueSelector,
  SelectMessageQueueByHash,
  SelectMessageQueueByRandom,
} from "./message-queue-selector.js";
export { LocalFileOffsetStore, type OffsetStore, RemoteBrokerOffsetStore } from "./offset-store.js";
export { Producer, type ProducerErrorSource, type ProducerOptions } from "./producer.js";
export { PushConsumer } from "./push-consumer.js";
export { restoreRetryTopic, sendBackTo } from "./retry.js";
export { signatureParts, signRequest } from "./sigv4.js";
export {
  LocalTransactionState,
  type TransactionListener,
  TransactionProducer,
  type TransactionSendResult,
} from "./transaction-producer.js";
