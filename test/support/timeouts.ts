/**
 * @module How long a test's SDK client waits for one request. The SDK's default (3 s, RocketMQ's
 * sendMsgTimeout) is a production setting; on a loaded 2-core machine a request can take longer, and a test
 * must not depend on machine speed. Tests that are about timeouts set their own.
 */
export const TEST_TIMEOUT_MS = 30_000;

/**
 * How long a test waits for a state it expects (`waitUntil`): only a guard against a test that would hang,
 * never a speed requirement, so long enough for a machine loaded past 20; a passing wait ends when its state holds.
 */
export const WAIT_GUARD_MS = 120_000;
