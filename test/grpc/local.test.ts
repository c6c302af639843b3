/** @module The gRPC endpoint's suites with RocketMQ's official clients, on the embedded store. */
import { producerCases } from "./producer-suite.js";

producerCases("local");
