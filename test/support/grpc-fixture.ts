/**
 * @module A local server with its gRPC endpoint on free loopback ports, on the embedded store or the AWS
 * adapters on the shared emulators (server-fixture.ts's `openBacking`), for RocketMQ's official clients;
 * and a quiet logger for those clients (they log to ~/logs/rocketmq otherwise), keeping what they said.
 *
 * Importing this module also routes the Node.js client's own default logger to a quiet one (see
 * `quietClientDefaultLogger`): without it a PushConsumer keeps its test process alive after `shutdown()`.
 */
import { createRequire } from "node:module";
import { after, before } from "node:test";
import { type NimbusConfigInput, parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { type LocalServer, type LocalServerOptions, startLocalServer } from "../../lib/dev/local-server.js";
import { type Api, api } from "./http.js";
import { type Backing, openBacking, type ServerMode } from "./server-fixture.js";

export interface GrpcTestServer {
  readonly server: LocalServer;
  readonly http: Api;
  /** `127.0.0.1:<port>`: a RocketMQ 5 client's `endpoints`. */
  readonly endpoint: string;
}

export async function startGrpcTestServer(
  mode: ServerMode,
  config: NimbusConfigInput = {},
  extra: Partial<LocalServerOptions> = {},
): Promise<GrpcTestServer & { close(): Promise<void> }> {
  const backing: Backing = await openBacking(mode);
  try {
    const server = await startLocalServer({
      port: 0,
      grpcPort: 0,
      storage: backing.choice,
      config: parseNimbusConfig(config),
      ...extra,
    });
    const endpoint = server.grpc?.endpoint ?? "";
    return {
      server,
      http: api(server.url),
      endpoint,
      async close() {
        try {
          await server.close();
        } finally {
          await backing.release();
        }
      },
    };
  } catch (err) {
    await backing.release();
    throw err;
  }
}

/** Starts a gRPC test server before the enclosing `describe`'s tests and closes it after them. */
export function useGrpcServer(
  mode: ServerMode,
  config?: NimbusConfigInput,
  extra?: Partial<LocalServerOptions>,
): GrpcTestServer {
  let current: (GrpcTestServer & { close(): Promise<void> }) | undefined;
  before(async () => {
    current = await startGrpcTestServer(mode, config, extra);
  });
  after(async () => {
    await current?.close();
  });
  const started = () => {
    if (!current) throw new Error("the gRPC test server is not started (use it inside tests)");
    return current;
  };
  return {
    get server() {
      return started().server;
    },
    get http() {
      return started().http;
    },
    get endpoint() {
      return started().endpoint;
    },
  };
}

/** A logger for RocketMQ's clients: nothing on disk or the console, the last lines kept for a failing test. */
export function quietLogger(keep = 200) {
  const lines: string[] = [];
  const log =
    (level: string) =>
    (...args: unknown[]) => {
      lines.push(`${level} ${args.map(String).join(" ")}`);
      if (lines.length > keep) lines.shift();
    };
  return { info: log("info"), warn: log("warn"), error: log("error"), debug: log("debug"), lines };
}

type ClientLogger = ReturnType<typeof quietLogger>;

/**
 * rocketmq-client-nodejs 1.0.8's consume services (a PushConsumer's StandardConsumeService and
 * FifoConsumeService) ignore the consumer's `logger` option: each calls the client's `getDefaultLogger()`,
 * which makes a new egg-logger file logger (~/logs/rocketmq) with a 1 s flush `setInterval` that nothing ever
 * clears, not `shutdown()` either, so the process cannot exit. The client's bug, not the endpoint's (found
 * with async_hooks: after the server and the clients have closed, that interval is the one handle left).
 * This points the client's default-logger factory (read at call time through its CommonJS exports) at a
 * quiet logger with no timer and no file. Returns the logger, whose `lines` keep what those services said.
 */
export function quietClientDefaultLogger(): ClientLogger {
  const logger = quietLogger();
  const loggerModule = createRequire(import.meta.url)("rocketmq-client-nodejs/dist/client/Logger.js") as {
    getDefaultLogger: () => unknown;
  };
  loggerModule.getDefaultLogger = () => logger;
  return logger;
}

export const clientDefaultLogger: ClientLogger = quietClientDefaultLogger();
