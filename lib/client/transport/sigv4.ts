/** @module The SDK's SigV4 signing: lib/core/sigv4.ts, shared with the server that checks Nimbus signatures. */
export * from "../../core/sigv4.js";
