/**
 * @module What `startLocalServer` takes and gives (lib/dev/local-server.ts): the storage choice, the server's
 * options, its auth, and the running server's handle.
 */
import type { InProcessDispatch } from "../broker/subscriptions/index.js";
import type { NimbusConfig } from "../config/nimbus-config.js";
import type { GrpcServer, TelemetryOptions } from "../grpc/index.js";
import type { HandlerContext, ServerRole } from "../http/context.js";
import type { LoadShedder, LoadSheddingOptions } from "../http/load-shedder.js";
import type { ReplayGuard } from "../http/replay-guard.js";
import type { RemotingDoor, Sniffing } from "../remoting/index.js";
import type { AwsStorageOptions } from "../storage/aws/index.js";
import type { FlushMode } from "../storage/local/index.js";
import type { Storage } from "../storage/storage.js";
import type { ProcessBus } from "./process-bus.js";
import type { InFlightBytes } from "./server-guard.js";

export type StorageChoice =
  | { kind: "local"; dataDir: string; flush?: FlushMode }
  | ({ kind: "aws"; provision?: boolean } & AwsStorageOptions);

export interface LocalServerOptions {
  /** Default 9876 (RocketMQ's name server port); 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  storage: StorageChoice;
  config?: NimbusConfig;
  /** What the process serves (default `all`: the name server and every configured broker). */
  role?: ServerRole;
  /** Broker registration interval, as RocketMQ's 30 s. */
  registerIntervalMs?: number;
  retentionIntervalMs?: number;
  /** Signatures and ACLs on every route but `GET /health` (`nimbus dev --auth`); absent: open, loopback only. */
  auth?: LocalAuthOptions | undefined;
  /**
   * Runs the deployment's background work here: subscription delivery, retention, transaction checks, lag samples
   * and delayed delivery (default true). `nimbus dev --workers N` runs it in one worker of N.
   */
  background?: boolean | undefined;
  /** The other worker processes of this deployment (`--workers`): hints and cache changes, both ways. */
  bus?: ProcessBus | undefined;
  /** Seals subscriptions' webhook secrets (32 bytes); default a key file in the data folder (`seal.key`). */
  sealKey?: Uint8Array | undefined;
  /** HTTPS (and wss:// for the channel) with this certificate and key, PEM (`--tls-cert`, `--tls-key`). */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  /** Serve a non-loopback `host` without auth (`--insecure`). */
  insecure?: boolean | undefined;
  /**
   * Request bytes read or answered at once, the remoting door's requests included; past it SYSTEM_BUSY. Default 4
   * maximal requests (24 MiB).
   */
  maxInFlightBytes?: number | undefined;
  /** Time a request's body has to arrive once its headers did; a slower one is dropped. Default 30 s. */
  bodyTimeoutMs?: number | undefined;
  /** Time a client has to read an answer while it reads nothing; a client silent longer is dropped. Default 30 s. */
  answerTimeoutMs?: number | undefined;
  /** Time a new connection may send nothing before it goes to HTTP (which times it out), with the remoting door on. */
  firstByteTimeoutMs?: number | undefined;
  /** How often the local timer job moves due delayed messages. Default the config's timerSweepIntervalMs. */
  delayedDeliveryIntervalMs?: number;
  /**
   * Requests running at once and how long one may wait for its turn before SYSTEM_BUSY (default 64 and
   * 200 ms: lib/http/load-shedder.ts; set here, no `nimbus dev` flag).
   */
  loadShedding?: LoadSheddingOptions | undefined;
  /** Also serve RocketMQ 5's gRPC protocol (docs/grpc.md) on this port (0: a free one), same host and auth. */
  grpcPort?: number | undefined;
  /**
   * Extra CA certificates (PEM) that subscriptions' HTTPS targets may chain to, beside Node's own roots
   * (`--target-ca`; docs/subscriptions.md). Targets are always verified.
   */
  targetCaPem?: string | Buffer | undefined;
  /**
   * RocketMQ 4.x's remoting protocol on the HTTP port (default true; over TLS with `tls`): a connection that starts with a
   * frame goes to the remoting door (docs/remoting.md). Further brokers of this process get ports of their own.
   */
  remoting?: boolean | undefined;
  /** Fixed remoting ports of the brokers after the first (default: free ports). */
  remotingBrokerPorts?: Readonly<Record<string, number>> | undefined;
  /** Bounds of the gRPC endpoint's Telemetry streams (tests make them small). */
  grpcTelemetry?: Partial<TelemetryOptions> | undefined;
  /** How long a hot queue's writer uses a leased range (QueueLogOptions.rangeUseMs, default 200 ms; tests make it long). */
  rangeUseMs?: number | undefined;
}

export interface LocalAuthOptions {
  /** The Super user configured on the command line or in the environment (not stored). */
  root?: { username: string; password: string } | undefined;
  /** Seals users' secrets in the store (32 bytes). */
  masterKey: Uint8Array;
  /** How long a user and its ACL are trusted once read (default 5 s; tests use 0). */
  cacheMs?: number | undefined;
  /** The nonces seen, shared by the servers of one process (`nimbus dev --slaves`); default one per server. */
  replay?: ReplayGuard | undefined;
}

export interface LocalServer {
  readonly url: string;
  readonly port: number;
  readonly context: HandlerContext;
  readonly storage: Storage;
  /** The push channel's WebSocket URL (docs/push-channel.md). */
  readonly channelUrl: string;
  /** Push channel sockets open now. */
  readonly channelSockets: () => number;
  /** Request bytes admitted and not yet answered (see `maxInFlightBytes`). */
  readonly inFlightBytes: number;
  /** The budget of those bytes, with its share for requests still arriving. */
  readonly requestBytes: InFlightBytes;
  /** The request path's load shedder (its counts of running, waiting and refused requests). */
  readonly shedder: LoadShedder;
  /** The gRPC endpoint, when `grpcPort` was given. */
  readonly grpc: GrpcServer | undefined;
  /** The remoting door (RocketMQ 4.x clients), unless turned off. */
  readonly remoting: RemotingDoor | undefined;
  /** The HTTP port's connections waiting for their first byte (HTTP or remoting?), when the door is on. */
  readonly sniffing: Sniffing | undefined;
  /** Subscription delivery in this process (its totals and last errors); absent where `background` is false. */
  readonly dispatch: InProcessDispatch | undefined;
  close(): Promise<void>;
}
