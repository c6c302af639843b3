/** @module RocketMQ's topology constants: which broker id is the master, and how long a silent broker or client stays live. */

/** RocketMQ's master broker id; brokers with other ids of the same brokerName are its slaves. */
export const MASTER_ID = 0;

/**
 * A broker not registered, or a client not heard from, for this long is gone: RocketMQ's namesrv
 * (BROKER_CHANNEL_EXPIRED_TIME) and broker (channel expiry of clients) both use 120 s.
 */
export const LIVENESS_EXPIRY_MS = 120_000;
