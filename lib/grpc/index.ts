/** @module The gRPC door: RocketMQ 5's `apache.rocketmq.v2.MessagingService` over the broker (docs/grpc.md). */
export { ROCKET_CODE, type RocketCode } from "./codes.js";
export { type GrpcServer, type GrpcServerOptions, startGrpcServer } from "./server.js";
export { DEFAULT_TELEMETRY_OPTIONS, type TelemetryOptions } from "./telemetry.js";
