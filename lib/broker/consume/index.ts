export type { CarriedOffsetsOptions } from "./carried-offsets.js";
export {
  type OffsetResetOptions,
  resetGroupOffsets,
  resetOffsetByTime,
  searchOffsetByTime,
} from "./offset-reset.js";
export { OffsetService } from "./offset-service.js";
export { type PulledRecords, PullService, toPulled } from "./pull-service.js";
export { DEFAULT_QUEUE_LOCK_OPTIONS, type QueueLockOptions, QueueLockService } from "./queue-locks.js";
