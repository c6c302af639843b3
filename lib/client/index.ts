/**
 * @module The Nimbus SDK (`nimbus-mq/client`): RocketMQ's client model over the Nimbus HTTP API.
 *
 * @example
 * import { Message, Producer, PushConsumer } from "nimbus-mq/client";
 * const producer = new Producer({ producerGroup: "pg", endpoints: "http://127.0.0.1:9876" });
 * await producer.start();
 * await producer.send(new Message("TopicTest", "TagA", "Hello"));
 */

export {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  DELIVERY_SIGNATURE_HEADER,
  type SignatureCheck,
  signDelivery,
  verifyDeliverySignature,
} from "../core/delivery-signature.js";
export { ErrorCode, NimbusError } from "../core/errors.js";
export { MessageQueue } from "../core/message-queue.js";
export { dlqTopic, retryTopic } from "../core/names.js";
export type { BrokerData, QueueData, TopicRouteData } from "../protocol/index.js";
export * from "./allocate/index.js";
export { buildMQClientId, localIPv4, resolveInstanceName } from "./client-id.js";
export type {
  ConsumeConcurrentlyContext,
  ConsumeConcurrentlyStatus,
  ConsumeFromWhere,
  ConsumeOrderlyContext,
  ConsumeOrderlyStatus,
  LitePullConsumerOptions,
  MessageListenerConcurrently,
  MessageListenerOrderly,
  MessageModel,
  PushConsumerOptions,
} from "./consumer/index.js";
export {
  FilterExpression,
  type FilterType,
  LitePullConsumer,
  LocalFileOffsetStore,
  MessageSelector,
  type MessageView,
  type OffsetStore,
  PushConsumer,
  RemoteBrokerOffsetStore,
  restoreRetryTopic,
  SimpleConsumer,
  type SimpleConsumerOptions,
  type Subscription,
  sendBackTo,
} from "./consumer/index.js";
export { Message, type MessageExt, type PullResult, type SendResult, type SendStatus } from "./message.js";
export {
  LocalTransactionState,
  type MessageQueueSelector,
  Producer,
  type ProducerErrorSource,
  type ProducerOptions,
  SelectMessageQueueByHash,
  SelectMessageQueueByRandom,
  type TransactionListener,
  TransactionProducer,
  type TransactionSendResult,
} from "./producer/index.js";
export type { NimbusBatchResponse, NimbusEvent, NimbusHandler, NimbusRecord } from "./subscriptions/index.js";
export { recordBody, recordBytes } from "./subscriptions/index.js";
export * from "./transport/index.js";
export {
  type Credentials,
  type CredentialsProvider,
  HttpTransport,
  type IamAuth,
  type NimbusCredentials,
  type RequestOptions,
  signatureParts,
  signRequest,
  type TransportOptions,
} from "./transport/index.js";
