/**
 * @module A POP group gets what is stored from its start on (docs/pop.md): tests and benchmarks that send before
 * their consumer starts fix the group's start first, as a consumer's start would.
 */
import type { Broker } from "../../lib/broker/index.js";

export async function startPopGroup(broker: Broker, group: string, topic: string): Promise<void> {
  await broker.pop.start(group, topic);
}
