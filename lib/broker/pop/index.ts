/** @module POP consumption (RocketMQ 5's SimpleConsumer): the broker's `pop` service and what it speaks. */

export type { FilterExpression, FilterType } from "../../core/filter/index.js";
export { MAX_WINDOW_ITEMS } from "./checkpoints.js";
export type { WakeCause } from "./long-poll.js";
export {
  type AckCode,
  DEFAULT_POP_MAX_DELIVERY_ATTEMPTS,
  DEFAULT_POP_OPTIONS,
  type PopGroupPolicy,
  type PopOptions,
  type PoppedMessage,
  type PopReceiveRequest,
  PopService,
} from "./pop-service.js";
export { MAX_CHECKPOINT_SPAN } from "./queue-pop.js";
