/**
 * @module RocketMQ's `AllocateMachineRoomNearby` ("MACHINE_ROOM_NEARBY-<inner>"): a wrapper that keeps a
 * room's queues with the consumers in that room, and shares a room's queues among all consumers only
 * when no consumer of the group lives there.
 */
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { MessageQueue } from "../../core/message-queue.js";
import { type AllocateMessageQueueStrategy, checkAllocateArgs } from "./strategy.js";

/** Says which machine room a broker's queue and a consumer are in. Both answers must be non-empty. */
export interface MachineRoomResolver {
  brokerDeployIn(messageQueue: MessageQueue): string;
  consumerDeployIn(clientID: string): string;
}

function illegal(message: string): NimbusError {
  return new NimbusError(ErrorCode.PARAMETER_ILLEGAL, message);
}

/** Groups items by room, keeping each group's input order; rooms in Java `TreeMap` (code unit) order. */
function groupByRoom<T>(items: readonly T[], roomOf: (item: T) => string, what: string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const room = roomOf(item);
    if (typeof room !== "string" || room.length === 0) throw illegal(`Machine room is null for ${what} ${item}`);
    let group = groups.get(room);
    if (group === undefined) {
      group = [];
      groups.set(room, group);
    }
    group.push(item);
  }
  const rooms = [...groups.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return new Map(rooms.map((room) => [room, groups.get(room)!]));
}

/**
 * Allocates with `allocateMessageQueueStrategy`, first among the consumers of the current consumer's room
 * over that room's queues, then, for each room without a live consumer, among all consumers over that
 * room's queues.
 *
 * @example
 * const resolver: MachineRoomResolver = {
 *   brokerDeployIn: (mq) => mq.brokerName.split("-")[0]!,
 *   consumerDeployIn: (cid) => cid.split("-")[0]!,
 * };
 * const strategy = new AllocateMachineRoomNearby(new AllocateMessageQueueAveragely(), resolver);
 * strategy.getName(); // "MACHINE_ROOM_NEARBY-AVG"
 */
export class AllocateMachineRoomNearby implements AllocateMessageQueueStrategy {
  private readonly allocateMessageQueueStrategy: AllocateMessageQueueStrategy;
  private readonly machineRoomResolver: MachineRoomResolver;

  constructor(allocateMessageQueueStrategy: AllocateMessageQueueStrategy, machineRoomResolver: MachineRoomResolver) {
    // Java throws NullPointerException with these messages; plain JavaScript callers can still pass nothing.
    if (allocateMessageQueueStrategy === undefined || allocateMessageQueueStrategy === null) {
      throw illegal("allocateMessageQueueStrategy is null");
    }
    if (machineRoomResolver === undefined || machineRoomResolver === null) throw illegal("machineRoomResolver is null");
    this.allocateMessageQueueStrategy = allocateMessageQueueStrategy;
    this.machineRoomResolver = machineRoomResolver;
  }

  getName(): string {
    return `MACHINE_ROOM_NEARBY-${this.allocateMessageQueueStrategy.getName()}`;
  }

  allocate(consumerGroup: string, currentCID: string, mqAll: MessageQueue[], cidAll: string[]): MessageQueue[] {
    if (!checkAllocateArgs(consumerGroup, currentCID, mqAll, cidAll)) return [];
    const resolver = this.machineRoomResolver;
    const inner = this.allocateMessageQueueStrategy;
    const mr2Mq = groupByRoom(mqAll, (mq) => resolver.brokerDeployIn(mq), "mq");
    const mr2c = groupByRoom(cidAll, (cid) => resolver.consumerDeployIn(cid), "consumer id");

    const result: MessageQueue[] = [];
    // 1. The queues of my room, among the consumers of my room.
    const currentMachineRoom = resolver.consumerDeployIn(currentCID);
    const mqInThisMachineRoom = mr2Mq.get(currentMachineRoom);
    mr2Mq.delete(currentMachineRoom);
    const consumerInThisMachineRoom = mr2c.get(currentMachineRoom) ?? [];
    if (mqInThisMachineRoom !== undefined && mqInThisMachineRoom.length > 0) {
      result.push(...inner.allocate(consumerGroup, currentCID, mqInThisMachineRoom, consumerInThisMachineRoom));
    }
    // 2. The queues of every room with no consumer of the group, among all consumers.
    for (const [machineRoom, queues] of mr2Mq) {
      if (!mr2c.has(machineRoom)) result.push(...inner.allocate(consumerGroup, currentCID, queues, cidAll));
    }
    return result;
  }
}
