/** @module Nimbus' pure domain core: queues and their order, permissions, name rules, messages and their codec, errors. No I/O. */

export * from "./crc32c.js";
export * from "./errors.js";
export * from "./filter/index.js";
export * from "./message.js";
export * from "./message-codec.js";
export * from "./message-id.js";
export * from "./message-queue.js";
export * from "./names.js";
export * from "./perm-name.js";
export * from "./subscription.js";
export * from "./topology.js";
