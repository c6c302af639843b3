/**
 * @module The gRPC endpoint: `apache.rocketmq.v2.MessagingService` on this door's own HTTP/2 (./http2) with
 * the service's protobuf codecs, every RPC decoded, given to the broker, encoded, its failures mapped by the one
 * table of codes.ts. Served by `nimbus dev` (default 127.0.0.1:8081) and `nimbus proxy`. RPCs Nimbus does not
 * serve answer NOT_IMPLEMENTED at once; a method the service does not have is gRPC's UNIMPLEMENTED; an
 * undecodable message its INTERNAL, before any handler.
 *
 * Bounded: a message at most `maxMessageBytes` (RESOURCE_EXHAUSTED past it), unary calls in flight at most
 * `maxInFlight` (TOO_MANY_REQUESTS past it, at once), Telemetry streams as telemetry.ts says, receives as
 * consume.ts says; connections, streams and header blocks as http2/connection.ts says. A deadline the client
 * gives (`grpc-timeout`) bounds a receive's long poll; past it the client resets the call, which cancels it here.
 */
import { createServer as createPlainServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import type { Broker } from "../broker/index.js";
import type { RequestBytes } from "../core/request-bytes.js";
import { UNTAKEN_ANSWERS_FULL, type UntakenAnswers } from "../core/untaken-answers.js";
import type { RequestAuth } from "../http/authorize.js";
import { MAX_RECEIVE_MESSAGES, MAX_REQUEST_BYTES } from "../protocol/index.js";
import { type CallContext, callContext } from "./call-context.js";
import { heartbeat, notifyClientTermination } from "./clients.js";
import { Refused, status, statusOfError, type WireStatus } from "./codes.js";
import { ackMessage, changeInvisibleDuration, forwardToDeadLetter, type PopPort, Receives } from "./consume.js";
import { GRPC_STATUS, GrpcCall, type MethodCodec, statusOnlyHeaders } from "./grpc-call.js";
import { encodeLiteralHeaders, Http2Connection, type RequestHeaders, type ServerStream } from "./http2/index.js";
import { messagingService, type RpcName } from "./messaging-service.js";
import { endTransaction, sendMessage } from "./produce.js";
import { queryAssignment, queryRoute } from "./routes.js";
import { SignatureReuse } from "./signature-reuse.js";
import { type TelemetryOptions, TelemetrySessions } from "./telemetry.js";
import type { Endpoints } from "./wire.js";

export interface GrpcServerOptions {
  /** Default 127.0.0.1. */
  host?: string | undefined;
  /** 0 picks a free port. */
  port: number;
  /** Signatures and ACLs (`--auth`); absent: every call is allowed. */
  auth?: RequestAuth | undefined;
  /** TLS (`--tls-cert --tls-key`): PEM certificate chain and private key. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /** The address clients are told to call (route endpoints) when they do not say which one they dialled. */
  advertisedHost?: string | undefined;
  /** Largest message accepted. Default the HTTP request limit (6 MiB: a 4 MiB body and its properties). */
  maxMessageBytes?: number | undefined;
  /**
   * The process's budget for the bytes of requests being served, which the HTTP and remoting doors share: a call whose
   * bytes do not fit is ended RESOURCE_EXHAUSTED at once. Absent: each call is bounded by `maxMessageBytes` alone.
   */
  requestBytes?: RequestBytes | undefined;
  /** The time a request has to arrive whole once its first byte came (`ReceiveLimits.receiveMs`). Default 30 s. */
  receiveMs?: number | undefined;
  /**
   * The bytes of answers clients have not taken, bounded across the process's connections (and its remoting door's):
   * an answer past it has its stream reset. Default the process's ledger (lib/core/untaken-answers.ts).
   */
  untakenAnswers?: UntakenAnswers | undefined;
  /** Unary calls answered at once, at most. Default 256. */
  maxInFlight?: number | undefined;
  telemetry?: Partial<TelemetryOptions> | undefined;
  /** The broker's POP service, which the consumer RPCs call; absent: they answer NOT_IMPLEMENTED. */
  pop?: PopPort | undefined;
  /** Receives waiting at once, at most. Default 512. */
  maxReceives?: number | undefined;
}

export interface GrpcServer {
  readonly port: number;
  /** `host:port`, as a client's `endpoints` option takes it. */
  readonly endpoint: string;
  readonly sessions: TelemetrySessions;
  close(): Promise<void>;
}

type Unary = (raw: unknown, ctx: CallContext) => Promise<{ status: WireStatus }>;

const NO_POP = "this build has no POP service: consumer RPCs are not served";

/** RPCs the protocol has and Nimbus does not serve: a clear answer, never a hang. */
const NOT_SERVED: Partial<Record<RpcName, string>> = {
  PullMessage: "PullMessage (offset-based pull) is not served: use ReceiveMessage, or Nimbus' HTTP pull",
  UpdateOffset: "UpdateOffset is not served: POP consumers keep no offsets",
  GetOffset: "GetOffset is not served: POP consumers keep no offsets",
  QueryOffset: "QueryOffset is not served: read offsets over Nimbus' HTTP API",
  RecallMessage: "RecallMessage is not served by Nimbus",
  SyncLiteSubscription: "lite topics are not served by Nimbus",
};

type Handler = (call: GrpcCall) => void;

/** Keepalive: an idle client is pinged, and a connection that stopped answering is dropped. */
const KEEPALIVE_MS = 60_000;
const KEEPALIVE_TIMEOUT_MS = 20_000;
/** Connections open at once, at most. */
const MAX_CONNECTIONS = 10_000;
/**
 * Answer bytes a connection's client may leave untaken: a stream whose answer goes past it is reset. Above the
 * largest answer a call may make (a receive of MAX_RECEIVE_MESSAGES messages of at most MAX_REQUEST_BYTES each),
 * so one such answer to a client that reads slowly is served; a client that keeps asking without reading is not.
 */
const MAX_PENDING_ANSWER_BYTES = MAX_RECEIVE_MESSAGES * MAX_REQUEST_BYTES + 32 * 1024 * 1024;

export async function startGrpcServer(broker: Broker, options: GrpcServerOptions): Promise<GrpcServer> {
  const host = options.host ?? "127.0.0.1";
  const maxMessageBytes = options.maxMessageBytes ?? MAX_REQUEST_BYTES;
  const maxInFlight = options.maxInFlight ?? 256;
  const pop = options.pop;
  const sessions = new TelemetrySessions(
    broker,
    options.telemetry,
    pop === undefined ? undefined : (group) => pop.groupPolicy(group),
  );
  let own: Endpoints = { scheme: "IPv4", addresses: [] };
  let inFlight = 0;
  const receives = pop === undefined ? undefined : new Receives(pop, options.maxReceives ?? 512);
  const popOf = (): PopPort => {
    if (pop === undefined) throw new Refused("NOT_IMPLEMENTED", NO_POP);
    return pop;
  };
  const reuse = new SignatureReuse();
  const context = (call: GrpcCall) => callContext(broker, call.metadata, options.auth, reuse);
  const answer = (call: GrpcCall, message: unknown) => {
    call.write(message);
    call.end();
  };

  const unary =
    (handler: Unary): Handler =>
    (call) => {
      if (inFlight >= maxInFlight) {
        answer(call, { status: status("TOO_MANY_REQUESTS", `over ${maxInFlight} calls in flight; retry`) });
        return;
      }
      inFlight++;
      context(call)
        .then((ctx) => handler(call.request, ctx))
        .then(
          (result) => answer(call, result),
          (err: unknown) => answer(call, { status: statusOfError(err) }),
        )
        .finally(() => inFlight--);
    };

  const implementation: Partial<Record<RpcName, Handler>> = {
    QueryRoute: unary((raw, ctx) => queryRoute(raw, ctx, own)),
    QueryAssignment: unary((raw, ctx) => queryAssignment(raw, ctx, own)),
    Heartbeat: unary((raw, ctx) => heartbeat(raw, ctx, sessions)),
    SendMessage: unary(sendMessage),
    EndTransaction: unary(endTransaction),
    NotifyClientTermination: unary((raw, ctx) => notifyClientTermination(raw, ctx, sessions)),
    ReceiveMessage: (call) => {
      if (receives === undefined) {
        answer(call, { status: status("NOT_IMPLEMENTED", NO_POP) });
        return;
      }
      context(call).then(
        // A call cancelled while its caller was checked is not served (nothing would hear its end).
        (ctx) => (call.writableEnded ? undefined : receives.serve(call, ctx)),
        (err: unknown) => answer(call, { status: statusOfError(err) }),
      );
    },
    AckMessage: unary((raw, ctx) => ackMessage(raw, ctx, popOf())),
    ChangeInvisibleDuration: unary((raw, ctx) => changeInvisibleDuration(raw, ctx, popOf())),
    ForwardMessageToDeadLetterQueue: unary((raw, ctx) => forwardToDeadLetter(raw, ctx, popOf())),
    Telemetry: (call) => {
      context(call).then(
        (ctx) => (call.writableEnded ? undefined : sessions.open(call, ctx)),
        (err: unknown) => answer(call, { status: statusOfError(err) }),
      );
    },
    PullMessage: (call) => answer(call, { status: status("NOT_IMPLEMENTED", NOT_SERVED.PullMessage ?? "") }),
  };
  for (const [rpc, why] of Object.entries(NOT_SERVED) as [RpcName, string][]) {
    if (rpc === "PullMessage") continue;
    implementation[rpc] = unary(async () => ({ status: status("NOT_IMPLEMENTED", why) }));
  }

  /** Each method's path (`/apache.rocketmq.v2.MessagingService/SendMessage`), its codec, kind and handler. */
  const methods = new Map<string, { codec: MethodCodec; streaming: boolean; handler: Handler }>();
  for (const [name, definition] of Object.entries(messagingService())) {
    const handler = implementation[name as RpcName];
    if (handler !== undefined)
      methods.set(definition.path, { codec: definition, streaming: definition.requestStream, handler });
  }

  const onStream = (stream: ServerStream, headers: RequestHeaders): void => {
    const contentType = headers.get("content-type")?.[0] ?? "";
    if (headers.get(":method")?.[0] !== "POST" || !contentType.startsWith("application/grpc")) {
      stream.respond(encodeLiteralHeaders([[":status", "415"]]), true);
      return;
    }
    const path = headers.get(":path")?.[0] ?? "";
    const method = methods.get(path);
    if (method === undefined) {
      stream.respond(
        statusOnlyHeaders(GRPC_STATUS.UNIMPLEMENTED, `The server does not implement the method ${path.slice(0, 200)}`),
        true,
      );
      return;
    }
    // Answers not taken past the connection's bound or the process's: refused before any work, so nothing is done
    // whose answer would then be reset.
    if (stream.answersFull) {
      stream.respond(statusOnlyHeaders(GRPC_STATUS.RESOURCE_EXHAUSTED, UNTAKEN_ANSWERS_FULL), true);
      return;
    }
    const call = new GrpcCall(stream, headers, method.codec, maxMessageBytes, method.streaming, {
      budget: options.requestBytes,
      receiveMs: options.receiveMs,
    });
    if (method.streaming) {
      method.handler(call);
      return;
    }
    // Unary and server-streaming calls start with their one request message, when the client's side ends.
    call.once("end", () => {
      if (call.writableEnded) return;
      if (call.request === undefined) call.fail(GRPC_STATUS.INTERNAL, "the call carried no request message");
      else method.handler(call);
    });
  };

  const connections = new Set<Http2Connection>();
  const onConnection = (socket: Socket) => {
    socket.setNoDelay(true);
    const connection = new Http2Connection(socket, onStream, {
      maxConcurrentStreams: 1000,
      maxHeaderBlockBytes: 64 * 1024,
      streamWindow: 1024 * 1024,
      keepaliveMs: KEEPALIVE_MS,
      keepaliveTimeoutMs: KEEPALIVE_TIMEOUT_MS,
      maxPendingBytes: MAX_PENDING_ANSWER_BYTES,
      untakenAnswers: options.untakenAnswers,
    });
    connections.add(connection);
    connection.onClosed(() => connections.delete(connection));
  };
  const server: Server = options.tls
    ? createTlsServer({ key: options.tls.key, cert: options.tls.cert, ALPNProtocols: ["h2"] }, onConnection)
    : createPlainServer(onConnection);
  server.maxConnections = MAX_CONNECTIONS;
  // Every socket, from its accept: a TLS one is a Http2Connection only once its handshake is done.
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host.replace(/^\[(.*)\]$/, "$1"), () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : options.port);
    });
  });
  const advertised = (options.advertisedHost ?? host).replace(/^\[(.*)\]$/, "$1");
  own = {
    scheme: /^\d+\.\d+\.\d+\.\d+$/.test(advertised) ? "IPv4" : advertised.includes(":") ? "IPv6" : "DOMAIN_NAME",
    addresses: [{ host: advertised, port }],
  };
  return {
    port,
    endpoint: `${advertised.includes(":") ? `[${advertised}]` : advertised}:${port}`,
    sessions,
    async close() {
      await sessions.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) connection.goAway();
      // Calls under way get 2 s to finish; then their connections are dropped.
      const force = setTimeout(() => {
        for (const connection of connections) connection.destroy();
        for (const socket of sockets) socket.destroy();
      }, 2000);
      await closed;
      clearTimeout(force);
    },
  };
}
