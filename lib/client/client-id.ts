/**
 * @module RocketMQ's client id rules (`ClientConfig.buildMQClientId`, `changeInstanceNameToPID`,
 * `RemotingUtil.getLocalAddress`). The client id names a consumer in its group's rebalance, so two live
 * clients must never share one.
 */
export { localIPv4 } from "../core/message-id-node.js";

/** The instance name a client has unless its user picks one; RocketMQ's default too. */
export const DEFAULT_INSTANCE_NAME = "DEFAULT";

export interface ClientIdParts {
  clientIP: string;
  instanceName: string;
  /** Appended as a third part unless blank (RocketMQ's unit mode). */
  unitName?: string | undefined;
}

/**
 * `clientIP@instanceName`, plus `@unitName` when a unit name is set.
 *
 * @example
 * buildMQClientId({ clientIP: "10.0.0.7", instanceName: "4242#8812345" }); // "10.0.0.7@4242#8812345"
 */
export function buildMQClientId({ clientIP, instanceName, unitName }: ClientIdParts): string {
  const id = `${clientIP}@${instanceName}`;
  return unitName === undefined || unitName.trim() === "" ? id : `${id}@${unitName}`;
}

export interface InstanceNameContext {
  role: "producer" | "consumer";
  /** A consumer's message model; CLUSTERING, RocketMQ's default, when omitted. */
  messageModel?: "CLUSTERING" | "BROADCASTING" | undefined;
  /** This process' id; `process.pid` when omitted. */
  pid?: number | undefined;
  /** A monotonic clock reading in ns; `process.hrtime.bigint()` when omitted. */
  nanoTime?: bigint | number | undefined;
}

/**
 * The instance name a client runs with. A name left at "DEFAULT" becomes `<pid>#<nanoTime>` for producers
 * and clustering consumers (RocketMQ's `changeInstanceNameToPID`): the pid alone collides when two
 * containers share an IP and both run as pid 1, and then both would be one consumer to the rebalance.
 * Broadcasting consumers keep "DEFAULT": each reads every queue, and their offsets are local.
 *
 * @example
 * resolveInstanceName("DEFAULT", { role: "producer", pid: 4242, nanoTime: 8812345n }); // "4242#8812345"
 */
export function resolveInstanceName(instanceName: string, context: InstanceNameContext): string {
  if (instanceName !== DEFAULT_INSTANCE_NAME) return instanceName;
  if (context.role === "consumer" && (context.messageModel ?? "CLUSTERING") === "BROADCASTING") return instanceName;
  const pid = context.pid ?? process.pid;
  const nanoTime = context.nanoTime ?? process.hrtime.bigint();
  return `${pid}#${nanoTime}`;
}
