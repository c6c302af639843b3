/**
 * @module What both proxy-cost suites (proxy-cost.ts for gRPC clients, proxy-cost-remoting.ts for the classic
 * remoting client) stand on: dynalite and s3rver, a local server registering the stage's brokers, a topic of
 * `queues` queues on `broker-a`, and `nimbus proxy` on its own storage client with AWS's latencies injected; and
 * how a span's counted requests are priced per message (docs/cost.md's list prices).
 */
import { openStorage, serveOn } from "../../lib/dev/local-server.js";
import { type ProxyServer, serveProxy } from "../../lib/dev/proxy-server.js";
import type { RequestCounts } from "../../lib/storage/request-counter.js";
import type { Storage } from "../../lib/storage/storage.js";
import { emulatorStorageOptions, startEmulators } from "../support/emulators.js";
import { type AwsLatencies, withAwsLatencies } from "./aws-latency.js";
import { createTopic } from "./data-plane.js";
import { PRICES_PER_MILLION } from "./stats.js";

export interface ProxyStage {
  proxy: ProxyServer;
  /** The proxy's storage client: its requests are the ones counted. */
  proxyStorage: Storage;
  topic: string;
}

/**
 * Runs `measure` against a fresh stage named `name` + `runId` (bucket, tables, topic), the proxy serving the
 * remoting door too when `remoting`; stops everything after.
 */
export async function withProxyStage<T>(
  o: { queues: number; latencies: AwsLatencies },
  names: { name: string; runId: string; remoting: boolean },
  measure: (stage: ProxyStage) => Promise<T>,
): Promise<T> {
  const { name, runId } = names;
  const emulators = await startEmulators();
  const aws = (provision: boolean) =>
    openStorage({
      kind: "aws",
      provision,
      ...emulatorStorageOptions(emulators, {
        bucket: `nimbus-${name.toLowerCase()}-${runId}`,
        tablePrefix: `${name.toLowerCase()}-${runId}-`,
      }),
    });
  const stageStorage = await aws(true);
  const proxyStorage: Storage = withAwsLatencies(await aws(false), o.latencies);
  const brokers = await serveOn(stageStorage, { port: 0, registerIntervalMs: 30_000 }, true);
  const proxy = await serveProxy(proxyStorage, names.remoting ? { port: 0, remotingPort: 0 } : { port: 0 });
  try {
    await brokers.context.broker.registerBrokers();
    const topic = `${name}${runId}`;
    await createTopic(brokers, topic, o.queues);
    return await measure({ proxy, proxyStorage, topic });
  } finally {
    await proxy.close();
    await brokers.close();
    await emulators.stop();
  }
}

/** A span's requests per message, and DynamoDB and S3 at list prices per million messages. */
export function pricePerMessage(
  used: RequestCounts,
  messages: number,
): { perMessage: RequestCounts; dollarsPerMillion: number } {
  const perMessage = Object.fromEntries(
    Object.entries(used).map(([k, v]) => [k, v / Math.max(1, messages)]),
  ) as unknown as RequestCounts;
  const dollarsPerMillion =
    perMessage.writeUnits * PRICES_PER_MILLION.writeUnit +
    perMessage.readUnits * PRICES_PER_MILLION.readUnit +
    perMessage.objectPuts * PRICES_PER_MILLION.s3Put +
    perMessage.objectGets * PRICES_PER_MILLION.s3Get;
  return { perMessage, dollarsPerMillion };
}
