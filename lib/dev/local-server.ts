/**
 * @module The local broker: one process serving the whole API on 127.0.0.1 with the same handlers as
 * Lambda (the request path of lib/http/request-handler.ts, called straight from the Node request: Lambda
 * reaches the same function through an API Gateway event), on the embedded store or on DynamoDB/S3 endpoints,
 * running the scheduled handlers (broker registration, retention, check-backs, delayed delivery) on timers.
 *
 * @example
 * const server = await startLocalServer({ port: 9876, storage: { kind: "local", dataDir: ".nimbus" } });
 * // ... await server.close();
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { join } from "node:path";
import { BROKER_TABLES } from "../broker/store/index.js";
import { readTargetCa } from "../broker/subscriptions/index.js";
import { createBroker } from "../config/create-broker.js";
import { awsRetryOptions, type NimbusConfig, parseNimbusConfig } from "../config/nimbus-config.js";
import { newMessageId } from "../core/message-id-node.js";
import { DEFAULT_PERM } from "../core/perm-name.js";
import { type GrpcServer, startGrpcServer } from "../grpc/index.js";
import type { HandlerContext, ServerRole } from "../http/context.js";
import { LoadShedder } from "../http/load-shedder.js";
import { LoopLag } from "../http/loop-lag.js";
import { RemotingDoor, sniffRemoting } from "../remoting/index.js";
import { requestAuth } from "./local-auth.js";
import { startLocalDispatch } from "./local-dispatch.js";
import type { LocalServer, LocalServerOptions, StorageChoice } from "./local-server-options.js";
import { loadMasterKey } from "./master-key.js";
import { listenServer } from "./placed-listen.js";
import { asPortInUse } from "./port-in-use.js";
import { wireBus } from "./process-bus.js";

export { ReplayGuard } from "../http/replay-guard.js";
export { PortInUseError } from "./port-in-use.js";

import type { ApiAnswer } from "../http/api-types.js";
import { busyAnswer, createRequestHandler } from "../http/request-handler.js";
import { ALL_ROUTES } from "../http/routes/index.js";
import { CHANNEL_PATH, endpoints, type ServerFrame } from "../protocol/index.js";
import { createAwsStorage, ensureBucket, ensureTables } from "../storage/aws/index.js";
import { createLocalStorage } from "../storage/local/index.js";
import type { Storage } from "../storage/storage.js";
import { toApiRequest, writeAnswer } from "./api-gateway-event.js";
import { refuseForeignPage } from "./browser-guard.js";
import { consoleBuildDir, serveConsole } from "./console-files.js";
import { servePushChannel } from "./push-sockets.js";
import { answerUnread, checkSignedHeaders } from "./refused-request.js";
import { DEFAULT_BODY_TIMEOUT_MS, readHeldBody } from "./request-body.js";
import {
  advertisedHost,
  checkOpenBinding,
  DEFAULT_MAX_IN_FLIGHT_BYTES,
  InFlightBytes,
  isLoopback,
} from "./server-guard.js";

export type { LocalAuthOptions, LocalServer, LocalServerOptions, StorageChoice } from "./local-server-options.js";
export type { ServerRole };

/** Opens the store; on the AWS adapters with the config's DynamoDB throttle retry (`dynamoThrottleRetry`), if any. */
export async function openStorage(choice: StorageChoice, config?: NimbusConfig): Promise<Storage> {
  if (choice.kind === "local") {
    mkdirSync(choice.dataDir, { recursive: true });
    return createLocalStorage({ dataDir: choice.dataDir, ...(choice.flush ? { flush: choice.flush } : {}) });
  }
  const { kind: _kind, provision, ...options } = choice;
  if (provision) {
    await ensureTables(options, BROKER_TABLES);
    await ensureBucket(options);
  }
  return createAwsStorage({ ...options, ...(config === undefined ? {} : awsRetryOptions(config)) });
}

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const storage = await openStorage(options.storage, options.config);
  try {
    return await serveOn(storage, { ...options, sealKey: options.sealKey ?? localSealKey(options.storage) }, true);
  } catch (err) {
    await storage.close();
    throw err;
  }
}

/**
 * The seal key of webhook secrets when none is given: a key file made once in the data folder (as the ACL master
 * key's), or, on the AWS adapters, a key of this process's own (a restart cannot open what it sealed: give
 * `sealKey`, as `nimbus dev` does from NIMBUS_SEAL_KEY).
 */
function localSealKey(choice: StorageChoice): Uint8Array {
  return choice.kind === "local" ? loadMasterKey(undefined, join(choice.dataDir, "seal.key")) : randomBytes(32);
}

/**
 * The brokers a process registers, at its own address: every configured broker for `all`, its own broker for
 * `broker` (with the configured permission of its name), none for the name server.
 */
function registrations(config: NimbusConfig, role: ServerRole): NimbusConfig["brokers"] {
  if (role.kind === "all") return config.brokers;
  if (role.kind === "namesrv") return [];
  const configured = config.brokers.find((b) => b.brokerName === role.brokerName);
  return [{ brokerName: role.brokerName, brokerId: role.brokerId, perm: configured?.perm ?? DEFAULT_PERM }];
}

/**
 * A server on an open store, in `options.role` (default all). It closes the store on `close()` only when
 * it `ownsStorage`: the slaves of `nimbus dev --slaves` share the store of the process they run in.
 */
export async function serveOn(
  storage: Storage,
  options: Omit<LocalServerOptions, "storage">,
  ownsStorage: boolean,
): Promise<LocalServer> {
  const config = options.config ?? parseNimbusConfig({});
  const role = options.role ?? { kind: "all" };
  const host = options.host ?? "127.0.0.1";
  checkOpenBinding(host, options.auth !== undefined, options.insecure === true, options.tls !== undefined);
  // A bad CA bundle stops the start here, before anything listens (the dispatcher reads it again later).
  if (options.targetCaPem !== undefined) readTargetCa(options.targetCaPem);
  let context: HandlerContext | undefined;
  // The event loop's lag: a send arriving while the loop runs late is refused on arrival (load-shedder.ts).
  const loopLag = new LoopLag();
  const shedder = new LoadShedder({
    ...options.loadShedding,
    lagMs: options.loadShedding?.lagMs ?? (() => loopLag.lagMs()),
  });
  const handler = createRequestHandler(ALL_ROUTES, async () => context as HandlerContext, { shedder });
  // Requests being answered: close() waits for them before it closes the store they use.
  const inFlight = new Set<Promise<void>>();
  const bytes = new InFlightBytes(options.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES);
  const consoleDir = consoleBuildDir();
  const answerTimeoutMs = options.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
  // Set once close() starts: a request arriving after it (on a connection kept alive) is refused at once and its
  // connection closed, so close() waits for the requests it found and none that need the store after it.
  let stopping = false;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    if (stopping) {
      res.shouldKeepAlive = false;
      writeAnswer(res, busyAnswer("the server is stopping"));
      req.resume();
      return;
    }
    // Overloaded: a write or pull refused on arrival is answered at once, in the turn its headers were parsed, before
    // its origin, path, signature or body are looked at: refusing the excess costs as little as it can, and nothing of
    // it is read or written. Reads (GET, HEAD) never wait here; the loop's lag refuses sends only.
    const refused =
      req.method === "GET" || req.method === "HEAD" ? undefined : shedder.arrivalRefusal(isSendRequest(req.url));
    if (refused !== undefined) {
      writeAnswer(res, busyAnswer(refused));
      req.resume(); // the body is drained, not kept: the connection stays open for the client's next request
      return;
    }
    const answered = Promise.resolve()
      .then(() => (context?.auth ? undefined : refuseForeignPage(req, isLoopback(host))))
      .then(() => serveConsole(req, res, consoleDir))
      .then(async (served) => {
        if (served) return;
        // The gate that checks the headers is the one the handler's check trusts (signedHeadersChecked).
        const auth = context?.auth;
        const held = await readHeldBody(req, {
          bytes,
          timeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
          precheck: auth && ((r) => checkSignedHeaders(auth, r)),
        });
        // The wait bound counts from here, the body read: a slow upload is not a wait for a turn.
        const receivedAt = shedder.now();
        let answer: ApiAnswer;
        try {
          // The precheck verified the signature over the headers and the body's claimed hash: the handler's check
          // compares the body with that hash and does not sign the request again.
          answer = await handler({
            ...toApiRequest(req, held.body),
            receivedAt,
            signedHeadersChecked: held.prechecked,
          });
        } catch (err) {
          held.release();
          throw err;
        }
        // The request's bytes and the answer's stay counted until the answer is sent (or its socket is gone), not
        // when it is handed to the socket: a client that never reads holds the budget, so new requests get
        // SYSTEM_BUSY instead of piling answers up in memory; and it is dropped once it stops reading for long.
        const answerBytes = Buffer.byteLength(answer.body);
        bytes.hold(answerBytes);
        res.once("close", () => {
          held.release();
          bytes.release(answerBytes);
        });
        res.setTimeout(answerTimeoutMs, () => res.destroy());
        writeAnswer(res, answer, answerBytes);
      })
      .catch((err: unknown) => answerUnread(req, res, err))
      .finally(() => inFlight.delete(answered));
    inFlight.add(answered);
  };
  const server: Server = options.tls ? createTlsServer({ ...options.tls }, serve) : createServer(serve);
  let remoting: RemotingDoor | undefined;
  // A remoting connection before the door exists (the broker is made once the port listens) is closed. With TLS
  // the door is served over TLS: the decrypted connections are looked at (never one door in clear).
  const remotingOn = options.remoting !== false;
  const sniffing = !remotingOn
    ? undefined
    : sniffRemoting(
        server,
        (socket, first) => {
          if (remoting === undefined) return false;
          remoting.accept(socket, undefined, first);
          return true;
        },
        { event: options.tls ? "secureConnection" : "connection", firstByteTimeoutMs: options.firstByteTimeoutMs },
      );
  const port = await listenServer(server, { port: options.port ?? 9876, host, backlog: HTTP_LISTEN_BACKLOG }).catch(
    (err: unknown) => {
      throw asPortInUse(err, "HTTP", host, options.port ?? 9876);
    },
  );
  const scheme = options.tls ? "https" : "http";
  const url = `${scheme}://${advertisedHost(host)}:${port}`;
  const broker = createBroker(
    storage,
    { ...config, brokers: registrations(config, role) },
    // nimbus dev's subscriptions may reach local webhooks unless the config says otherwise.
    {
      apiUrl: url,
      newMessageId,
      sealKey: options.sealKey,
      defaultTargetNetworks: "loopback",
      rangeUseMs: options.rangeUseMs,
    },
  );
  const channelUrl = `${options.tls ? "wss" : "ws"}://${host}:${port}${CHANNEL_PATH}`;
  const auth = options.auth;
  const ctx: HandlerContext = {
    broker,
    role,
    channelUrl,
    ...(auth && { auth: requestAuth(storage, auth) }),
  };
  context = ctx;
  const bus = options.bus;
  const relay = bus && ((connectionId: string, frame: ServerFrame) => bus.send({ t: "post", connectionId, frame }));
  const channel = servePushChannel(server, broker, ctx.auth, isLoopback(host), relay);
  // A door's port is taken: nothing half-started keeps running (the remoting door's ports and sockets included).
  const abandon = async () => {
    loopLag.stop();
    await remoting?.close();
    await channel.close();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    sniffing?.closeUndecided();
    server.closeAllConnections();
    await closed;
  };
  if (remotingOn) {
    const door = new RemotingDoor({
      context: ctx,
      brokerNames: [...new Set(registrations(config, role).map((b) => b.brokerName))],
      host: advertisedHost(host),
      brokerPorts: options.remotingBrokerPorts,
      tls: options.tls,
      requestBytes: bytes,
      receiveMs: options.bodyTimeoutMs,
      listen: listenServer,
    });
    try {
      await door.listen(port);
    } catch (err) {
      await door.close();
      await abandon();
      throw asPortInUse(err, "remoting", host, 0);
    }
    remoting = door;
  }
  let grpc: GrpcServer | undefined;
  try {
    grpc =
      options.grpcPort === undefined
        ? undefined
        : await startGrpcServer(broker, {
            host,
            port: options.grpcPort,
            auth: ctx.auth,
            // HTTPS with --tls-cert: gRPC is TLS too, with the same certificate (never one door in clear).
            tls: options.tls && { cert: Buffer.from(options.tls.cert), key: Buffer.from(options.tls.key) },
            advertisedHost: advertisedHost(host),
            telemetry: options.grpcTelemetry,
            pop: broker.pop,
            requestBytes: bytes,
            receiveMs: options.bodyTimeoutMs,
          });
  } catch (err) {
    await abandon();
    throw asPortInUse(err, "gRPC", host, options.grpcPort ?? 0);
  }

  // The scheduled handlers' jobs (functions/register-brokers.ts, retention.ts, transaction-check.ts, sample-lag.ts),
  // on timers: every process registers what it serves; the name server (or the all-in-one process) runs the others.
  // One run of a job at a time (a run longer than its period is not started twice), and close() waits for
  // the runs in flight before it closes the store.
  await broker.registerBrokers();
  const background = options.background !== false;
  // Subscriptions delivered in-process, woken by appends, saved subscriptions, due retries and a backstop.
  const dispatch = background
    ? startLocalDispatch(broker, {
        lambdaEndpoint: process.env.NIMBUS_LAMBDA_ENDPOINT,
        targetCaPem: options.targetCaPem,
      })
    : undefined;
  if (bus) {
    const door = remoting;
    if (door !== undefined) door.onMembersChanged = (group) => bus.send({ t: "members", group });
    wireBus(bus, {
      broker,
      auth: ctx.auth,
      deliverRelayed: channel.deliverRelayed,
      dispatch,
      membersChanged: door && ((group) => door.membersChangedElsewhere(group)),
    });
  }
  const running = new Map<string, Promise<unknown>>();
  const every = (job: string, periodMs: number, run: () => Promise<unknown>) =>
    setInterval(() => {
      if (running.has(job)) return;
      const done = run()
        .catch(logJobError(job))
        .finally(() => running.delete(job));
      running.set(job, done);
    }, periodMs);
  const timers = [every("register brokers", options.registerIntervalMs ?? 30_000, () => broker.registerBrokers())];
  if (role.kind !== "broker" && background) {
    timers.push(
      every("retention", options.retentionIntervalMs ?? 3_600_000, () => broker.applyRetention()),
      every("transaction check", config.transactionCheckIntervalMs, () => broker.checkTransactions()),
      every("lag samples", broker.lagSamples.options.intervalMs, () => broker.sampleLag()),
      every("delayed delivery", options.delayedDeliveryIntervalMs ?? config.timerSweepIntervalMs, () =>
        broker.moveDueMessages(),
      ),
    );
  }

  return {
    url,
    port,
    context: ctx,
    storage,
    channelUrl,
    channelSockets: () => channel.size,
    get inFlightBytes() {
      return bytes.used;
    },
    requestBytes: bytes,
    shedder,
    grpc,
    remoting,
    sniffing,
    dispatch,
    async close() {
      stopping = true;
      for (const t of timers) clearInterval(t);
      loopLag.stop();
      await dispatch?.close();
      await grpc?.close();
      await remoting?.close();
      await Promise.all(running.values());
      await channel.close();
      // No new connection (none waiting for its first byte either); the requests in the handlers finish first.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      sniffing?.closeUndecided();
      server.closeIdleConnections();
      await Promise.all(inFlight);
      // A sweep a request started may outlive that request's answer.
      await broker.timers.settled();
      // The last append answered: the ranges this process leased on hot queues are sealed by it, not by readers.
      await broker.close();
      server.closeAllConnections();
      await closed;
      if (ownsStorage) await storage.close();
    },
  };
}

/**
 * Connections the kernel holds for the HTTP port before it is accepted (the OS caps it at its own
 * `net.core.somaxconn`). Node's default, 511, overflows when a plain client opens a connection per request in
 * flight (a burst of a few hundred at once, with `--workers` one process accepting for all): the kernel then drops
 * the client's SYN, which it sends again only after a second (then 3 s, 7 s), so a send that found no free
 * connection waited seconds before the broker saw it, or failed to connect. Queued connections cost a few hundred
 * bytes of kernel memory each.
 */
export const HTTP_LISTEN_BACKLOG = 4096;

/** Default time an answer may sit unread by a client that reads nothing (then its connection is dropped). */
export const DEFAULT_ANSWER_TIMEOUT_MS = 30_000;

/** Whether a request's target is `POST /send`'s path (with or without a query): the requests the loop's lag may refuse. */
const isSendRequest = (url: string | undefined): boolean =>
  url === endpoints.send.path || url?.startsWith(`${endpoints.send.path}?`) === true;

const logJobError = (job: string) => (err: unknown) => console.error(`nimbus: ${job} failed:`, err);
