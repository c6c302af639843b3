/** @module RocketMQ's ServiceState: where a producer or consumer is in its life (start once, shut down once). */
export type ServiceState = "CREATE_JUST" | "RUNNING" | "SHUTDOWN_ALREADY";
