/**
 * @module The gRPC endpoint: `apache.rocketmq.v2.MessagingService` on grpc-js, every RPC decoded, given to
 * the broker, encoded, its failures mapped by the one table of codes.ts. Served by `nimbus dev` (default
 * 127.0.0.1:8081) and `nimbus proxy`. RPCs Nimbus does not serve answer NOT_IMPLEMENTED at once; a method the
 * service does not have is grpc-js's UNIMPLEMENTED; an undecodable message its INTERNAL, before any handler.
 *
 * Bounded: a message at most `maxMessageBytes` (RESOURCE_EXHAUSTED past it), unary calls in flight at most
 * `maxInFlight` (TOO_MANY_REQUESTS past it, at once), Telemetry streams as telemetry.ts says, receives as
 * consume.ts says.
 */
import {
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { Broker } from "../broker/index.js";
import type { RequestAuth } from "../http/authorize.js";
import { MAX_REQUEST_BYTES } from "../protocol/index.js";
import { type CallContext, callContext } from "./call-context.js";
import { heartbeat, notifyClientTermination } from "./clients.js";
import { Refused, status, statusOfError, type WireStatus } from "./codes.js";
import { ackMessage, changeInvisibleDuration, forwardToDeadLetter, type PopPort, Receives } from "./consume.js";
import { guardLongDeadlines } from "./long-deadlines.js";
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

export async function startGrpcServer(broker: Broker, options: GrpcServerOptions): Promise<GrpcServer> {
  const host = options.host ?? "127.0.0.1";
  const maxMessageBytes = options.maxMessageBytes ?? MAX_REQUEST_BYTES;
  const maxInFlight = options.maxInFlight ?? 256;
  const server = new Server({
    "grpc.max_receive_message_length": maxMessageBytes,
    "grpc.max_send_message_length": maxMessageBytes,
    "grpc.max_concurrent_streams": 1000,
    // No channelz (grpc-js' call and message counters, two clock reads per call): nothing here serves it.
    "grpc.enable_channelz": 0,
    // An idle client is pinged, and a connection that stopped answering is dropped.
    "grpc.keepalive_time_ms": 60_000,
    "grpc.keepalive_timeout_ms": 20_000,
  });
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
  const context = (call: { metadata: ServerUnaryCall<unknown, unknown>["metadata"] }) =>
    callContext(broker, call.metadata, options.auth, reuse);

  const unary =
    (handler: Unary) =>
    (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>): void => {
      if (inFlight >= maxInFlight) {
        callback(null, { status: status("TOO_MANY_REQUESTS", `over ${maxInFlight} calls in flight; retry`) });
        return;
      }
      inFlight++;
      context(call)
        .then((ctx) => handler(call.request, ctx))
        .then(
          (answer) => callback(null, answer),
          (err: unknown) => callback(null, { status: statusOfError(err) }),
        )
        .finally(() => inFlight--);
    };

  const implementation: UntypedServiceImplementation = {
    QueryRoute: unary((raw, ctx) => queryRoute(raw, ctx, own)),
    QueryAssignment: unary((raw, ctx) => queryAssignment(raw, ctx, own)),
    Heartbeat: unary((raw, ctx) => heartbeat(raw, ctx, sessions)),
    SendMessage: unary(sendMessage),
    EndTransaction: unary(endTransaction),
    NotifyClientTermination: unary((raw, ctx) => notifyClientTermination(raw, ctx, sessions)),
    ReceiveMessage: (call: ServerWritableStream<unknown, unknown>) => {
      if (receives === undefined) {
        call.write({ status: status("NOT_IMPLEMENTED", NO_POP) });
        call.end();
        return;
      }
      context(call).then(
        (ctx) => receives.serve(call, ctx),
        (err: unknown) => {
          call.write({ status: statusOfError(err) });
          call.end();
        },
      );
    },
    AckMessage: unary((raw, ctx) => ackMessage(raw, ctx, popOf())),
    ChangeInvisibleDuration: unary((raw, ctx) => changeInvisibleDuration(raw, ctx, popOf())),
    ForwardMessageToDeadLetterQueue: unary((raw, ctx) => forwardToDeadLetter(raw, ctx, popOf())),
    Telemetry: (call: ServerDuplexStream<unknown, unknown>) => {
      context(call).then(
        (ctx) => sessions.open(call, ctx),
        (err: unknown) => {
          call.write({ status: statusOfError(err) });
          call.end();
        },
      );
    },
    PullMessage: (call: ServerWritableStream<unknown, unknown>) => {
      call.write({ status: status("NOT_IMPLEMENTED", NOT_SERVED.PullMessage ?? "") });
      call.end();
    },
  };
  for (const [rpc, why] of Object.entries(NOT_SERVED)) {
    if (rpc === "PullMessage") continue;
    implementation[rpc] = unary(async () => ({ status: status("NOT_IMPLEMENTED", why) }));
  }
  server.addService(messagingService(), implementation);

  const credentials = options.tls
    ? ServerCredentials.createSsl(null, [{ private_key: options.tls.key, cert_chain: options.tls.cert }], false)
    : ServerCredentials.createInsecure();
  const bindHost = host.includes(":") ? `[${host}]` : host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${bindHost}:${options.port}`, credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  guardLongDeadlines(server);
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
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}
