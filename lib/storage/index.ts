/** @module The storage ports. Adapters live in `./local` (embedded) and `./aws` (DynamoDB and S3). */
export * from "./item-size.js";
export * from "./object-store.js";
export * from "./request-counter.js";
export * from "./storage.js";
export * from "./table.js";
