/**
 * @module Test servers: `startTestServer(mode, config?)` starts the local server on a free loopback port,
 * on a fresh temp data folder ("local") or on s3rver and a DynamoDB emulator, dynalite ("aws") or
 * DynamoDB Local ("aws-dynamodb-local"), with a fresh table prefix and bucket. `restart()` stops the server
 * and starts another on the same data (a restart, or a new config on old data). `close()` stops the server
 * and deletes its data; the emulators are shared by the servers of one process and stop with the last one
 * (`shared-emulators.ts`), so a test file exits on its own.
 *
 * `openTestBroker()` is the service-level twin: a `Broker` on the embedded store in a temp folder, with
 * a fake clock, for the time rules (expiry, retention) that HTTP tests cannot wait for.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import type { Broker } from "../../lib/broker/broker.js";
import type { InProcessDispatch } from "../../lib/broker/subscriptions/index.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { type NimbusConfigInput, parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import {
  type LocalServer,
  type LocalServerOptions,
  type StorageChoice,
  startLocalServer,
} from "../../lib/dev/local-server.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { dynamoDBLocalUnavailable } from "./dynamodb-local.js";
import { type DynamoBackend, EMULATOR_CREDENTIALS, EMULATOR_TIMEOUTS } from "./emulators.js";
import { type Api, api } from "./http.js";
import { acquireEmulators } from "./shared-emulators.js";

export type ServerMode = "local" | "aws" | "aws-dynamodb-local";

export const MODE_LABEL: Record<ServerMode, string> = {
  local: "local",
  aws: "aws: dynalite+s3rver",
  "aws-dynamodb-local": "aws: DynamoDB Local+s3rver",
};

/** The DynamoDB emulator of an AWS mode. */
export const MODE_BACKEND: Record<Exclude<ServerMode, "local">, DynamoBackend> = {
  aws: "dynalite",
  "aws-dynamodb-local": "dynamodb-local",
};

/** Why `mode` cannot run on this machine (DynamoDB Local without Java), or undefined. */
export function modeUnavailable(mode: ServerMode): string | undefined {
  return mode === "aws-dynamodb-local" ? dynamoDBLocalUnavailable() : undefined;
}

export interface TestServer {
  readonly mode: ServerMode;
  readonly url: string;
  readonly server: LocalServer;
  /** Where the data lives (to start a CLI or another server on it). */
  readonly storage: StorageChoice;
  /** Stops this server and starts a new one on the same data (optionally with another config). */
  restart(config?: NimbusConfigInput): Promise<TestServer>;
  /** Stops the server and deletes its data. Idempotent. */
  close(): Promise<void>;
}

/** Where a test server's data lives, and how to throw it away. */
export interface Backing {
  choice: StorageChoice;
  release(): Promise<void>;
}

let seq = 0;

/** Fresh data for a server of `mode`: a temp folder, or a table prefix and bucket on the shared emulators. */
export async function openBacking(mode: ServerMode): Promise<Backing> {
  seq++;
  if (mode === "local") {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-e2e-"));
    return {
      choice: { kind: "local", dataDir },
      release: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const { emulators, release } = await acquireEmulators(MODE_BACKEND[mode]);
  return {
    choice: {
      kind: "aws",
      provision: true,
      region: "us-east-1",
      bucket: `nimbus-e2e-${process.pid}-${seq}`,
      tablePrefix: `e2e${seq}-`,
      dynamoEndpoint: emulators.dynamoEndpoint,
      s3Endpoint: emulators.s3Endpoint,
      credentials: EMULATOR_CREDENTIALS,
      timeouts: EMULATOR_TIMEOUTS,
    },
    // The emulators keep everything in memory or in their temp folder, and stop with their last user.
    release,
  };
}

/** Server options a test sets beside the mode and config (kept across restarts), e.g. `targetCaPem`. */
export type TestServerExtra = Pick<
  LocalServerOptions,
  | "targetCaPem"
  | "rangeUseMs"
  | "loadShedding"
  | "background"
  | "registerIntervalMs"
  | "maxInFlightBytes"
  | "bodyTimeoutMs"
  | "firstByteTimeoutMs"
>;

export async function startTestServer(
  mode: ServerMode,
  config?: NimbusConfigInput,
  extra: TestServerExtra = {},
): Promise<TestServer> {
  const backing = await openBacking(mode);
  try {
    return await serve(mode, backing, config, extra);
  } catch (err) {
    await backing.release();
    throw err;
  }
}

async function serve(
  mode: ServerMode,
  backing: Backing,
  config: NimbusConfigInput | undefined,
  extra: TestServerExtra,
): Promise<TestServer> {
  const server = await startLocalServer({
    ...extra,
    port: 0,
    storage: backing.choice,
    ...(config === undefined ? {} : { config: parseNimbusConfig(config) }),
  });
  let state: "open" | "handed-over" | "closed" = "open";
  return {
    mode,
    url: server.url,
    server,
    storage: backing.choice,
    async restart(next) {
      if (state !== "open") throw new Error("restart of a server that is no longer open");
      state = "handed-over";
      await server.close();
      return serve(mode, backing, next, extra);
    },
    async close() {
      if (state !== "open") return;
      state = "closed";
      try {
        await server.close();
      } finally {
        await backing.release();
      }
    },
  };
}

/** What `useTestServer` gives a `describe`: the server and its API, valid from `before` to `after`. */
export interface ServerHandle {
  readonly server: TestServer;
  readonly http: Api;
  /** Restarts the server on the same data (see `TestServer.restart`); `server` and `http` follow. */
  restart(config?: NimbusConfigInput): Promise<void>;
}

/** Starts a test server before the enclosing `describe`'s tests and closes it after them. */
export function useTestServer(mode: ServerMode, config?: NimbusConfigInput, extra?: TestServerExtra): ServerHandle {
  let current: TestServer | undefined;
  let http: Api | undefined;
  before(async () => {
    current = await startTestServer(mode, config, extra);
    http = api(current.url);
  });
  after(async () => {
    await current?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the test server is not started (use it inside tests)");
    return value;
  };
  return {
    get server() {
      return started(current);
    },
    get http() {
      return started(http);
    },
    async restart(next) {
      current = await started(current).restart(next);
      http = api(current.url);
    },
  };
}

let names = 0;

/** A topic or group name no other test of this process uses. */
export const uniqueName = (prefix: string): string => `${prefix}-${process.pid}-${++names}`;

/** A settable clock for service tests. */
export interface FakeClock {
  (): number;
  set(ms: number): void;
  advance(ms: number): void;
}

export function fakeClock(start = Date.UTC(2024, 0, 1)): FakeClock {
  let now = start;
  const clock = (() => now) as FakeClock;
  clock.set = (ms) => {
    now = ms;
  };
  clock.advance = (ms) => {
    now += ms;
  };
  return clock;
}

export interface TestBroker {
  broker: Broker;
  clock: FakeClock;
  storage: Storage;
  close(): Promise<void>;
}

/** A broker on a fresh embedded store (temp folder), on `clock`, with its brokers registered at the clock's time. */
export async function openTestBroker(
  options: { config?: NimbusConfigInput; clock?: FakeClock } = {},
): Promise<TestBroker> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-broker-"));
  const storage = createLocalStorage({ dataDir });
  const clock = options.clock ?? fakeClock();
  const broker = createBroker(storage, parseNimbusConfig(options.config ?? {}), {
    apiUrl: "http://127.0.0.1:9876",
    newMessageId,
    now: clock,
  });
  await broker.registerBrokers();
  return {
    broker,
    clock,
    storage,
    async close() {
      await storage.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A local server's subscription delivery (it runs in every test server: `background` is never off in tests). */
export function dispatchOf(server: { dispatch: InProcessDispatch | undefined }): InProcessDispatch {
  if (server.dispatch === undefined) throw new Error("this server runs no subscription delivery (background: false)");
  return server.dispatch;
}
