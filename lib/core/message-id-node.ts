/**
 * @module The Node.js side of unique message ids: a `MessageIdGenerator` with this host's IPv4 address,
 * this process' pid and a random hash, installed as the default behind `createUniqId`. The broker and the
 * SDK both make ids with it (the broker for messages sent without one).
 */
import { randomBytes } from "node:crypto";
import { type NetworkInterfaceInfo, networkInterfaces } from "node:os";
import { MessageIdGenerator, type MessageIdGeneratorOptions, setDefaultMessageIdGenerator } from "./message-id.js";

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

/**
 * This host's IPv4 address as RocketMQ picks it: the first non-internal IPv4 address that does not start
 * with "127.0" or "192.168", else the last non-internal one, else "127.0.0.1". Pass `interfaces` to test.
 *
 * @example
 * const clientId = buildMQClientId({ clientIP: localIPv4(), instanceName: "orders-1" });
 */
export function localIPv4(
  interfaces: Record<string, NetworkInterfaceInfo[] | undefined> = networkInterfaces(),
): string {
  const candidates: string[] = [];
  for (const infos of Object.values(interfaces)) {
    for (const info of infos ?? []) {
      // Node 18.0-18.3 reported the family as a number; accept both.
      const family: unknown = info.family;
      if ((family === "IPv4" || family === 4) && !info.internal) candidates.push(info.address);
    }
  }
  const preferred = candidates.find((ip) => !ip.startsWith("127.0") && !ip.startsWith("192.168"));
  return preferred ?? candidates[candidates.length - 1] ?? "127.0.0.1";
}
