/**
 * @module What a test stage built as the AWS functions build theirs needs for subscriptions: a seal key for webhook
 * secrets (the stage's NimbusSealKey) and a config whose targets may be the tests' webhooks on loopback (AWS stages
 * allow public addresses only: lib/core/target-address.ts).
 */
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";

export const TEST_SEAL_KEY = new Uint8Array(32).fill(7);

export const LOCAL_WEBHOOKS = parseNimbusConfig({ subscriptionTargetNetworks: "loopback" });
