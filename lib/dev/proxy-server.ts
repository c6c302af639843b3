/**
 * @module `nimbus proxy`: RocketMQ 5's gRPC endpoint alone, on a stage's storage (the embedded store, or
 * DynamoDB and S3), as RocketMQ 5's proxy runs beside its brokers. It serves no HTTP, registers no broker
 * and runs no scheduled job: the stage's own brokers (its Lambda functions, or `nimbus dev`) do those; it
 * reads the routes they registered and calls the same broker code they do. On AWS it is the container
 * service of the `grpc` stage setting (infra/grpc.ts), and wakes the stage's `Dispatch` function when a send
 * lands on a subscribed topic, as the Send function does (`wakeDispatch`, from `--dispatch-function`).
 *
 * @example
 * const proxy = await startProxyServer({ port: 8081, storage: { kind: "local", dataDir: ".nimbus" } });
 * // ... await proxy.close();
 */

import type { DispatchWake } from "../broker/subscriptions/index.js";
import { createBroker } from "../config/create-broker.js";
import { attachDispatchWake, type DispatchInvoke } from "../config/dispatch-wake.js";
import { type NimbusConfig, parseNimbusConfig } from "../config/nimbus-config.js";
import { newMessageId } from "../core/message-id-node.js";
import { type GrpcServer, startGrpcServer, type TelemetryOptions } from "../grpc/index.js";
import type { HandlerContext } from "../http/context.js";
import { RemotingDoor } from "../remoting/index.js";
import type { Storage } from "../storage/storage.js";
import { requestAuth } from "./local-auth.js";
import { type LocalAuthOptions, openStorage, type StorageChoice } from "./local-server.js";
import { listenServer } from "./placed-listen.js";
import { asPortInUse } from "./port-in-use.js";
import { type ProcessBus, wireBus } from "./process-bus.js";
import { advertisedHost, checkOpenBinding, DEFAULT_MAX_IN_FLIGHT_BYTES, InFlightBytes } from "./server-guard.js";

export interface ProxyServerOptions {
  /** Default 8081 (RocketMQ 5's proxy port); 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  storage: StorageChoice;
  config?: NimbusConfig;
  auth?: LocalAuthOptions | undefined;
  /** Serve a non-loopback `host` without auth (`--insecure`). */
  insecure?: boolean | undefined;
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /**
   * A load balancer in front ends TLS (the AWS stage's NLB, `--tls-offloaded`): signed calls may then reach the
   * port in clear, which must be reachable from the balancer's private network only (on AWS the task's security
   * group admits the VPC's addresses only).
   */
  tlsOffloaded?: boolean | undefined;
  /** The other worker processes of `nimbus proxy --workers N` (lib/dev/process-bus.ts). */
  bus?: ProcessBus | undefined;
  /** The host name clients are told to call (a load balancer's): gRPC's when they do not say, remoting's always. */
  advertisedHost?: string | undefined;
  /**
   * RocketMQ 4.x's remoting protocol (docs/remoting.md) from this port: the name server and the config's first
   * broker here, each further broker at the next port, in the config's order (0: free ports). Absent: not served.
   */
  remotingPort?: number | undefined;
  telemetry?: Partial<TelemetryOptions> | undefined;
  /** How long a hot queue's writer uses a leased range (QueueLogOptions.rangeUseMs, default 200 ms; tests make it long). */
  rangeUseMs?: number | undefined;
  /**
   * Invokes the stage's Dispatch for a subscribed topic an append landed on (lib/config/dispatch-wake.ts): on
   * AWS, a Lambda `Event` invocation of NIMBUS_DISPATCH_FUNCTION. Absent: delivery waits for Dispatch's schedule.
   */
  wakeDispatch?: DispatchInvoke | undefined;
}

/**
 * Sends to one queue that wait together (group commit) are inline only up to 2 KiB (one or two small messages);
 * above, they go to an object shared by every queue's waiting batch: one S3 PUT per flush instead of a write
 * unit per KB of each message (docs/cost.md "The gRPC endpoint").
 */
export const PROXY_MERGED_INLINE_BYTES = 2 * 1024;

/** How long a closing proxy waits for the wakes it started (each invoke gives up after 1 s by itself). */
const CLOSE_SETTLE_MS = 2_000;

export interface ProxyServer {
  readonly grpc: GrpcServer;
  /** The remoting door (RocketMQ 4.x clients), when `remotingPort` was given. */
  readonly remoting: RemotingDoor | undefined;
  readonly storage: Storage;
  /** The send-time wake of Dispatch (`wakeDispatch`), its counts and its `settle`. */
  readonly dispatchWake: DispatchWake | undefined;
  close(): Promise<void>;
}

export async function startProxyServer(options: ProxyServerOptions): Promise<ProxyServer> {
  checkOpenBinding(options.host ?? "127.0.0.1", options.auth !== undefined, options.insecure === true, tlsOf(options));
  const storage = await openStorage(options.storage, options.config);
  try {
    return await serveProxy(storage, options);
  } catch (err) {
    await storage.close();
    throw err;
  }
}

/** The proxy on storage already open (`startProxyServer` opens it; tests wrap it); its close closes the storage. */
export async function serveProxy(storage: Storage, options: Omit<ProxyServerOptions, "storage">): Promise<ProxyServer> {
  const host = options.host ?? "127.0.0.1";
  checkOpenBinding(host, options.auth !== undefined, options.insecure === true, tlsOf(options));
  const stageConfig = options.config ?? parseNimbusConfig({});
  // The stage's own brokers register; the proxy serves them (the remoting door a port per broker name).
  const config = { ...stageConfig, brokers: [] };
  const broker = createBroker(storage, config, {
    apiUrl: "",
    newMessageId,
    mergedInlineThresholdBytes: PROXY_MERGED_INLINE_BYTES,
    rangeUseMs: options.rangeUseMs,
  });
  // Not settled before each answer, as a Lambda must (a frozen container sends nothing): the task keeps running.
  const wake = options.wakeDispatch === undefined ? undefined : attachDispatchWake(broker, options.wakeDispatch);
  const gate = options.auth && requestAuth(storage, options.auth);
  // The other workers of `nimbus proxy --workers N`: appends wake their long polls, route and ACL changes apply.
  // Its remoting door's notices too (set once the door listens).
  let door: RemotingDoor | undefined;
  if (options.bus)
    wireBus(options.bus, {
      broker,
      auth: gate,
      deliverRelayed: () => undefined,
      dispatch: undefined,
      membersChanged: (group) => door?.membersChangedElsewhere(group),
    });
  // The bytes of requests being served, both doors' (the local server's default budget): past it, refused at once.
  const requestBytes = new InFlightBytes(DEFAULT_MAX_IN_FLIGHT_BYTES);
  const grpc = await startGrpcServer(broker, {
    requestBytes,
    host,
    port: options.port ?? 8081,
    tls: options.tls,
    advertisedHost: options.advertisedHost ?? advertisedHost(host),
    telemetry: options.telemetry,
    pop: broker.pop,
    ...(gate && { auth: gate }),
  });
  const remoting =
    options.remotingPort === undefined
      ? undefined
      : await serveRemoting(
          { broker, role: { kind: "all" }, ...(gate && { auth: gate }) },
          [...new Set(stageConfig.brokers.map((b) => b.brokerName))],
          {
            host,
            port: options.remotingPort,
            advertisedHost: options.advertisedHost ?? advertisedHost(host),
            // With --tls-cert every port of the door is TLS too (never one door in clear).
            tls: options.tls,
            requestBytes,
          },
        ).catch(async (err: unknown) => {
          await grpc.close();
          throw err;
        });
  door = remoting;
  const bus = options.bus;
  if (bus && remoting) remoting.onMembersChanged = (group) => bus.send({ t: "members", group });
  return {
    grpc,
    remoting,
    storage,
    dispatchWake: wake,
    async close() {
      await remoting?.close();
      await grpc.close();
      await wake?.settle(CLOSE_SETTLE_MS);
      await broker.timers.settled();
      // The last append answered: the ranges this process leased on hot queues are sealed by it, not by readers.
      await broker.close();
      await storage.close();
    },
  };
}

/** The remoting door on ports of its own: `port` for the first broker (and the name server), the next for the next. */
async function serveRemoting(
  context: HandlerContext,
  brokerNames: readonly string[],
  at: {
    host: string;
    port: number;
    advertisedHost: string;
    tls: { cert: Buffer; key: Buffer } | undefined;
    requestBytes: InFlightBytes;
  },
): Promise<RemotingDoor> {
  if (at.port !== 0 && at.port + brokerNames.length - 1 > 65_535)
    throw new Error(`remoting port ${at.port}: its ${brokerNames.length} brokers' ports pass 65535`);
  const brokerPorts = Object.fromEntries(brokerNames.map((name, i) => [name, at.port === 0 ? 0 : at.port + i]));
  const door = new RemotingDoor({
    context,
    brokerNames,
    host: at.host,
    advertisedHost: at.advertisedHost,
    brokerPorts,
    tls: at.tls,
    requestBytes: at.requestBytes,
    listen: listenServer,
  });
  try {
    await door.listen();
  } catch (err) {
    await door.close();
    throw asPortInUse(err, "remoting", at.host, at.port);
  }
  return door;
}

/** Whether callers' traffic is TLS: this server's own, or a balancer's in front of it. */
const tlsOf = (options: { tls?: unknown; tlsOffloaded?: boolean | undefined }): boolean =>
  options.tls !== undefined || options.tlsOffloaded === true;
