/** @module The gRPC endpoint's suites with RocketMQ's official clients, on the embedded store. */
import { consumerCases } from "./consumer-suite.js";
import { crossProtocolCases } from "./cross-protocol-suite.js";
import { producerCases } from "./producer-suite.js";
import { sendRulesCases } from "./send-rules-suite.js";

producerCases("local");
crossProtocolCases("local");
consumerCases("local");
sendRulesCases("local");
