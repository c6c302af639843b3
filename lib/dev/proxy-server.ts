/**
 * @module `nimbus proxy`: RocketMQ 5's gRPC endpoint alone, on a stage's storage (the embedded store, or
 * DynamoDB and S3), as RocketMQ 5's proxy runs beside its brokers. It serves no HTTP, registers no broker
 * and runs no scheduled job: the stage's own brokers (its Lambda functions, or `nimbus dev`) do those; it
 * reads the routes they registered and calls the same broker code they do. On AWS it is the container
 * service of the `grpc` stage setting (infra/grpc.ts).
 *
 * @example
 * const proxy = await startProxyServer({ port: 8081, storage: { kind: "local", dataDir: ".nimbus" } });
 * // ... await proxy.close();
 */
import { createBroker } from "../config/create-broker.js";
import { type NimbusConfig, parseNimbusConfig } from "../config/nimbus-config.js";
import { newMessageId } from "../core/message-id-node.js";
import { type GrpcServer, startGrpcServer, type TelemetryOptions } from "../grpc/index.js";
import type { Storage } from "../storage/storage.js";
import { type LocalAuthOptions, openStorage, requestAuth, type StorageChoice } from "./local-server.js";
import { advertisedHost, checkOpenBinding } from "./server-guard.js";

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
  /** The host name clients are told to call (a load balancer's), when they do not say. */
  advertisedHost?: string | undefined;
  telemetry?: Partial<TelemetryOptions> | undefined;
}

export interface ProxyServer {
  readonly grpc: GrpcServer;
  readonly storage: Storage;
  close(): Promise<void>;
}

export async function startProxyServer(options: ProxyServerOptions): Promise<ProxyServer> {
  const host = options.host ?? "127.0.0.1";
  checkOpenBinding(host, options.auth !== undefined, options.insecure === true);
  const storage = await openStorage(options.storage);
  try {
    const config = { ...(options.config ?? parseNimbusConfig({})), brokers: [] };
    const broker = createBroker(storage, config, { apiUrl: "", newMessageId });
    const auth = options.auth;
    const grpc = await startGrpcServer(broker, {
      host,
      port: options.port ?? 8081,
      tls: options.tls,
      advertisedHost: options.advertisedHost ?? advertisedHost(host),
      telemetry: options.telemetry,
      pop: broker.pop,
      ...(auth && { auth: requestAuth(storage, auth) }),
    });
    return {
      grpc,
      storage,
      async close() {
        await grpc.close();
        await broker.timers.settled();
        await storage.close();
      },
    };
  } catch (err) {
    await storage.close();
    throw err;
  }
}
