/** @module AWS Signature Version 4 for the SDK: lives in lib/core (the Lambdas sign Management API calls with it too). */
export * from "../core/sigv4.js";
