/** @module Queue allocation strategies of RocketMQ's client: which queues of a topic each consumer of a group reads. */
export * from "./allocate-averagely.js";
export * from "./allocate-averagely-by-circle.js";
export * from "./allocate-by-config.js";
export * from "./allocate-by-machine-room.js";
export * from "./allocate-consistent-hash.js";
export * from "./allocate-machine-room-nearby.js";
export * from "./consistent-hash-router.js";
export * from "./strategy.js";
