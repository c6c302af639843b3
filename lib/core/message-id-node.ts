/**
 * @module The Node.js side of unique message ids: a `MessageIdGenerator` with this host's IPv4 address,
 * this process' pid and a random hash, installed as the default behind `createUniqId`.
 */
import { randomBytes } from "node:crypto";
import {
  MessageIdGenerator,
  type MessageIdGeneratorOptions,
  setDefaultMessageIdGenerator,
} from "../core/message-id.js";
import { localIPv4 } from "./client-id.js";

/**
 * A generator with node values: `localIPv4()` (random bytes instead of a loopback address, as RocketMQ
 * fakes one when it finds no IP), `process.pid` and 4 random bytes. Options override any of them.
 *
 * @example
 * const ids = createNodeMessageIdGenerator();
 * ids.next();
 */
export function createNodeMessageIdGenerator(options: MessageIdGeneratorOptions = {}): MessageIdGenerator {
  const ip = localIPv4();
  return new MessageIdGenerator({
    ...(ip.startsWith("127.") ? {} : { ip }),
    pid: process.pid,
    hash: randomBytes(4).readUInt32BE(0),
    ...options,
  });
}

let installed: MessageIdGenerator | undefined;

/**
 * Makes `createUniqId` use a node-valued generator, once per process; later calls return the same one.
 * Producers and the broker call it when they start.
 *
 * @example
 * installNodeMessageIdGenerator();
 * createUniqId(); // now starts with this host's address and pid
 */
export function installNodeMessageIdGenerator(): MessageIdGenerator {
  if (installed === undefined) {
    installed = createNodeMessageIdGenerator();
    setDefaultMessageIdGenerator(installed);
  }
  return installed;
}

/**
 * A new unique message id from the installed node generator; a `() => string` to hand to the broker
 * (`createBroker(..., { newMessageId })`) or a producer.
 *
 * @example
 * properties[MessageConst.UNIQ_KEY] ??= newMessageId();
 */
export function newMessageId(): string {
  return installNodeMessageIdGenerator().next();
}
