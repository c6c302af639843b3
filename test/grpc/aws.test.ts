/** @module The gRPC endpoint's suites with RocketMQ's official clients, on the AWS adapters (dynalite and s3rver). */
import { consumerCases } from "./consumer-suite.js";
import { crossProtocolCases } from "./cross-protocol-suite.js";
import { producerCases } from "./producer-suite.js";
import { sendRulesCases } from "./send-rules-suite.js";

producerCases("aws");
crossProtocolCases("aws");
consumerCases("aws");
sendRulesCases("aws");
