export type { ConsumeOrderlyContext, ConsumeOrderlyStatus, MessageListenerOrderly } from "./consume-orderly.js";
export type {
  ConsumeConcurrentlyContext,
  ConsumeConcurrentlyStatus,
  ConsumeFromWhere,
  LitePullConsumerOptions,
  MessageListenerConcurrently,
  MessageModel,
  PushConsumerOptions,
} from "./consumer-options.js";
export { LitePullConsumer } from "./lite-pull-consumer.js";
export {
  compileSubscription,
  EVERY_MESSAGE,
  MessageSelector,
  pullFilterFields,
  type Subscription,
  subscriptionData,
} from "./message-selector.js";
export { LocalFileOffsetStore, type OffsetStore, RemoteBrokerOffsetStore } from "./offset-store.js";
export { PushConsumer } from "./push-consumer.js";
export { restoreRetryTopic, sendBackTo } from "./retry.js";
export {
  FilterExpression,
  type FilterType,
  type MessageView,
  SimpleConsumer,
  type SimpleConsumerOptions,
} from "./simple-consumer.js";
