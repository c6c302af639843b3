/** @module What a client says of itself in its heartbeats (mqadmin's producerConnection shows both). */

/** RocketMQ's LanguageCode of this SDK. */
export const CLIENT_LANGUAGE = "TYPESCRIPT";
/** The SDK's version: package.json's (test/unit/client-version.test.ts checks they agree). */
export const CLIENT_VERSION = "0.1.0";
