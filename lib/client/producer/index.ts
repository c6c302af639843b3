export {
  type MessageQueueSelector,
  SelectMessageQueueByHash,
  SelectMessageQueueByRandom,
} from "./message-queue-selector.js";
export { Producer, type ProducerErrorSource, type ProducerOptions } from "./producer.js";
export { topicRouteData2TopicPublishInfo } from "./topic-publish-info.js";
export {
  LocalTransactionState,
  type TransactionListener,
  TransactionProducer,
  type TransactionSendResult,
} from "./transaction-producer.js";
