/**
 * @module A new POP group starts at the end of each queue on its first receive (docs/pop.md): tests and
 * benchmarks that send first start their group with one empty receive on every queue of the topic.
 */
import type { Broker } from "../../lib/broker/index.js";

export async function startPopGroup(broker: Broker, group: string, topic: string): Promise<void> {
  await broker.pop.receive({
    group,
    topic,
    filter: { type: "TAG", expression: "*" },
    maxMessages: 1,
    invisibleMs: 1000,
    longPollMs: 0,
  });
}
