/**
 * @module The lambda-concurrency bench's containers: each one's storage (counting the failed conditional writes),
 * and what it runs, the queue log's append or the Send function's handler behind API Gateway events.
 */
import { QueueLog } from "../../lib/broker/queue-log/index.js";
import type { QueueRef } from "../../lib/broker/queue-log/queue-index.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { isNimbusError } from "../../lib/core/errors.js";
import type { MessageRecord } from "../../lib/core/message.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { createApiHandler } from "../../lib/http/handler.js";
import { SERVICE_ROUTES } from "../../lib/http/routes/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Table, TableSpec } from "../../lib/storage/table.js";
import { apiGatewayEvent } from "../support/api-gateway-event.js";

/** Counts the conditional writes that failed (each billed as a write). */
export function countingConflicts(storage: Storage, counts: { conflicts: number; adds: number }): Storage {
  const wrap = (table: Table): Table => ({
    ...table,
    spec: table.spec,
    counter: table.counter,
    get: (k, o) => table.get(k, o),
    delete: (k) => table.delete(k),
    query: (pk, o) => table.query(pk, o),
    put: async (item, o) => {
      try {
        return await table.put(item, o);
      } catch (err) {
        if (isNimbusError(err) && err.code === "CONDITION_FAILED") counts.conflicts++;
        throw err;
      }
    },
    add: async (...args: Parameters<Table["add"]>) => {
      counts.adds++;
      try {
        return await table.add(...args);
      } catch (err) {
        if (isNimbusError(err) && err.code === "CONDITION_FAILED") counts.conflicts++;
        throw err;
      }
    },
  });
  const tables = new Map<string, Table>();
  return {
    ...storage,
    objects: storage.objects,
    counter: storage.counter,
    close: () => storage.close(),
    table(spec: TableSpec): Table {
      let t = tables.get(spec.name);
      if (!t) {
        t = wrap(storage.table(spec));
        tables.set(spec.name, t);
      }
      return t;
    },
  };
}

export interface Container {
  storage: Storage;
  /** Its next append dies right after reserving (the dead shape). */
  kill(): void;
  /** Seals the unused tails of the ranges it holds and waits for its PUTs still out (the run is over). */
  release(): Promise<void>;
  /** Sends `messages` to `queue` as one append, as the container does; answers the first one's offset. */
  send(queue: QueueRef, messages: MessageRecord[]): Promise<{ offset: number }>;
}

/** A container running the queue log's append (the path that contends), its time bounds stretched by `k`. */
export function queueLogAppender(storage: Storage, k: number, indexKeys: number, hedgeBudget?: number): Container {
  let dead = false;
  const log = new QueueLog(storage, {
    objectPutHedge: { budget: hedgeBudget },
    maxAppendMs: 2500 * k,
    reservationLeaseMs: 500 * k,
    rangeUseMs: 200 * k,
    indexKeys,
    afterReserve: () => {
      if (dead) throw new Error("killed after reserving");
    },
  });
  return {
    storage,
    kill: () => {
      dead = true;
    },
    release: () => log.releaseRanges(),
    send: async (queue, messages) => ({ offset: (await log.append(queue, messages)).queueOffset }),
  };
}

/** A container of the Send function: its own broker behind the Send Lambda's HTTP handler, API Gateway events. */
export function sendFunction(storage: Storage): Container {
  const broker = createBroker(storage, parseNimbusConfig({}), { apiUrl: "https://api.test", newMessageId });
  const handle = createApiHandler(SERVICE_ROUTES.Send, async () => ({ broker, role: { kind: "all" as const } }));
  return {
    storage,
    kill: () => undefined,
    release: async () => undefined,
    send: async (queue, messages) => {
      const request = {
        topic: queue.topic,
        brokerName: queue.brokerName,
        queueId: queue.queueId,
        messages: messages.map((m) => ({ body: Buffer.from(m.body).toString("base64"), properties: m.properties })),
      };
      const answer = await handle(apiGatewayEvent("POST", "/send", request));
      if (answer.statusCode !== 200) throw new Error(`send answered ${answer.statusCode}: ${answer.body}`);
      const sent = JSON.parse(answer.body ?? "{}") as { queueOffset: number; msgIds: string[] };
      return { offset: sent.queueOffset };
    },
  };
}

/** The topic of `queues` queues on broker-a, with the brokers registered (what the Send function looks up). */
export async function createTopic(storage: Storage, topic: string, queues: number): Promise<void> {
  const broker = createBroker(storage, parseNimbusConfig({}), { apiUrl: "https://api.test", newMessageId });
  try {
    await broker.registerBrokers();
    await broker.topics.upsert(topic, { readQueueNums: queues, writeQueueNums: queues, brokerNames: ["broker-a"] });
  } finally {
    await storage.close();
  }
}
