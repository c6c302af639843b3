/** @module POP consumption (RocketMQ 5's SimpleConsumer): the broker's `pop` service and what it speaks. */

export type { FilterExpression, FilterType } from "../../core/filter/index.js";
export { MAX_WINDOW_ITEMS } from "./checkpoints.js";
export type { WakeCause } from "./long-poll.js";
export { DEFAULT_POP_MAX_DELIVERY_ATTEMPTS, DEFAULT_POP_OPTIONS, type PopOptions } from "./pop-options.js";
export { type AckCode, PopService } from "./pop-service.js";
export type {
  PopCollaborators,
  PopGroupConfig,
  PopGroupPolicy,
  PoppedMessage,
  PopReceiveRequest,
} from "./pop-types.js";
export { MAX_CHECKPOINT_SPAN } from "./queue-pop.js";
