/**
 * @module What runs on AWS, as plain data: each table, each Lambda function (handler, size, the resources
 * it may touch), each API route and the function that serves it, each schedule. The routes are the
 * endpoints of lib/protocol, each on the function of its service. The SST modules (api.ts, schedules.ts,
 * functions.ts, storage.ts) build resources from it; the offline checks (test/infra/) read it without SST,
 * to bundle every handler, check that each function is granted exactly the tables and bucket it uses, and
 * that the tables are the broker's (BROKER_TABLES), which infra/ does not import: no broker code runs at deploy.
 */
import type { StageSettings } from "../lib/config/stages.js";
import { ENDPOINTS, routeKey, type ServiceName } from "../lib/protocol/index.js";

/** A DynamoDB table: key `pk` (string) and `sk` of `sortKeyType`, an optional TTL attribute. */
export interface TableSpec {
  readonly name: string;
  readonly sortKeyType: "string" | "number";
  readonly ttlAttribute?: string;
}

/** The broker's tables by logical name (lib/broker/store/tables.ts's BROKER_TABLES, checked equal by test/infra). */
export const TABLES: readonly TableSpec[] = [
  { name: "queue-index", sortKeyType: "number" },
  { name: "routes", sortKeyType: "string" },
  { name: "offsets", sortKeyType: "string" },
  { name: "clients", sortKeyType: "string", ttlAttribute: "expiresAt" },
  { name: "transactions", sortKeyType: "string", ttlAttribute: "expiresAt" },
  { name: "connections", sortKeyType: "string", ttlAttribute: "expiresAt" },
  { name: "acl", sortKeyType: "string", ttlAttribute: "expiresAt" },
  { name: "timers", sortKeyType: "string", ttlAttribute: "expiresAt" },
  { name: "pop", sortKeyType: "string", ttlAttribute: "expiresAt" },
];

/**
 * The gRPC proxy (infra/grpc.ts, `nimbus proxy` on ECS): the tables its RPCs touch, as the functions of the
 * same HTTP counterparts: routes (QueryRoute, QueryAssignment, sends, a consumer's group, dead-letter topics,
 * the wake's subscriptions and marker), queue-index and the bucket (sends, receives, commits),
 * timers (delay messages; sends move due ones), transactions (half messages, ends, check-backs), clients
 * (Telemetry registrations, heartbeats, terminations, check-backs), pop (ReceiveMessage, AckMessage,
 * ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue keep their checkpoints there). On a stage with ACLs
 * the task is linked to AUTH_TABLE too (signatures and ACLs), as the API functions are. Nothing else: it
 * serves no admin route, keeps no offsets (POP consumers have none), posts no push hints (no connections).
 * A send to a subscribed topic wakes Dispatch, as the Send function's does. test/infra/grpc-grants.test.ts
 * checks it with RocketMQ's official client calling every RPC.
 */
export const GRPC_PROXY = {
  tables: ["routes", "queue-index", "timers", "transactions", "clients", "pop"],
  bucket: true,
  invokes: ["Dispatch"],
} as const satisfies Pick<FunctionSpec, "tables" | "bucket" | "invokes">;

/**
 * What the remoting door adds to the proxy's grants on a stage that serves it (`grpc.remoting`): RocketMQ 4.x
 * consumers keep their offsets on the broker (QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, a pull's commit).
 * Everything else it touches is GRPC_PROXY's. test/infra/remoting-grants.test.ts checks it with the 4.9.8 client.
 */
export const REMOTING_PROXY = { tables: ["offsets"] } as const satisfies Pick<FunctionSpec, "tables">;

/** The remoting door's first port, on the proxy's task and on its load balancer alike (the name server's). */
export const REMOTING_PORT = 9876;

/**
 * The remoting door's port of each broker name of the stage (the first one's also the name server's), in the
 * config's order from REMOTING_PORT, as `nimbus proxy --remoting-port` assigns them: a 4.x client tells brokers
 * apart by the address it dials, so each broker needs a listener of its own.
 */
export function remotingPorts(
  nimbus: Pick<StageSettings["nimbus"], "brokers">,
): { brokerName: string; port: number }[] {
  return [...new Set(nimbus.brokers.map((b) => b.brokerName))].map((brokerName, i) => ({
    brokerName,
    port: REMOTING_PORT + i,
  }));
}

/** A Lambda function. Its `tables` and `bucket` are all it is linked to, hence all IAM lets it use. */
export interface FunctionSpec {
  /** SST handler: path from the repo root, then the export. */
  readonly handler: `functions/${string}.handler`;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  /** Logical table names (lib/broker/store/tables.ts) the function reads or writes. */
  readonly tables: readonly string[];
  /** Whether it reads, writes or deletes message batches in the bucket. */
  readonly bucket: boolean;
  /** Whether it posts push hints to the channel's connections (linked to the WebSocket API: ManageConnections). */
  readonly channel?: true;
  /**
   * The functions it invokes (linked to them: `lambda:InvokeFunction` on each, nothing else). `Dispatch`: an
   * append to a subscribed topic wakes it (NIMBUS_DISPATCH_FUNCTION; its marker is in the routes table).
   */
  readonly invokes?: readonly "Dispatch"[];
  /** Whether it seals or opens subscriptions' webhook secrets (gets NIMBUS_SEAL_KEY, the NimbusSealKey secret). */
  readonly sealsSecrets?: true;
}

/**
 * API functions, one per service of lib/protocol (not one per route): fewer cold starts, and a service's routes
 * share its warm broker. Memory buys CPU too: the data plane decodes and CRC-checks batches.
 * Timeouts stay far below API Gateway's 30 s integration limit and above the SDK's 3 s default.
 */
export const API_FUNCTIONS = {
  NameServer: {
    handler: "functions/name-server.handler",
    memoryMb: 256,
    timeoutSeconds: 10,
    tables: ["routes"],
    bucket: false,
  },
  Topics: {
    handler: "functions/topics.handler",
    memoryMb: 256,
    timeoutSeconds: 15,
    tables: ["routes", "queue-index"],
    bucket: false,
  },
  // An append hints the queue's holders on the push channel (their connections, then a post each).
  // Delayed sends and send-backs wait in the timer store; sends and pulls also move due ones (timers).
  // A send to a subscribed topic wakes Dispatch: the topic's subscriptions and wake marker are in routes.
  Send: {
    handler: "functions/send.handler",
    memoryMb: 512,
    timeoutSeconds: 10,
    tables: ["routes", "queue-index", "timers", "connections"],
    bucket: true,
    channel: true,
    invokes: ["Dispatch"],
  },
  // POP receives, acks and invisible-time changes keep their checkpoints in the pop table; a receive may
  // wait up to 20 s (long polling) and move a message past its max attempts to %DLQ% (routes, queue-index).
  Pull: {
    handler: "functions/pull.handler",
    memoryMb: 512,
    timeoutSeconds: 25,
    tables: ["routes", "queue-index", "timers", "pop"],
    bucket: true,
  },
  // Progress reads the store time of each group's last consumed message: a batch, maybe in the bucket.
  // Orderly queue locks and offset resets are records of the clients table (lease chains, the reset notice).
  // A reset of a group's offsets: its members hear of it on the push channel.
  Offsets: {
    handler: "functions/offsets.handler",
    memoryMb: 256,
    timeoutSeconds: 15,
    tables: ["offsets", "routes", "queue-index", "clients", "connections"],
    bucket: true,
    channel: true,
  },
  // Subscription groups live in the routes table; the group list reads each group's topics and offsets
  // (offsets), members (clients) and queues' ends (queue-index); the lag history is in the offsets table.
  Groups: {
    handler: "functions/groups.handler",
    memoryMb: 256,
    timeoutSeconds: 15,
    tables: ["routes", "offsets", "clients", "queue-index"],
    bucket: false,
  },
  // A client joining or leaving over HTTP: the group's members hear of it on the push channel.
  // A clustering consumer's heartbeat creates its group's retry topic (routes).
  Clients: {
    handler: "functions/clients.handler",
    memoryMb: 256,
    timeoutSeconds: 10,
    tables: ["clients", "routes", "connections"],
    bucket: false,
    channel: true,
  },
  // Half messages live in the queue log (half queues), their records in the transactions table.
  // A commit appends to the real queue: a push hint, like a send, and the wake of a subscribed topic's Dispatch.
  Transactions: {
    handler: "functions/transactions.handler",
    memoryMb: 512,
    timeoutSeconds: 10,
    tables: ["routes", "queue-index", "transactions", "connections"],
    bucket: true,
    channel: true,
    invokes: ["Dispatch"],
  },
  // Users and ACLs (lib/broker/security/acl-store.ts); every API function also reads them to authorize (AUTH_TABLE).
  Acl: {
    handler: "functions/acl.handler",
    memoryMb: 256,
    timeoutSeconds: 10,
    tables: ["acl"],
    bucket: false,
  },
  // Subscriptions live in the routes table (`subscriptions` / group); a PUT checks the topic exists there too.
  // A saved subscription fixes its group's POP start on the topic (one item in pop).
  Subscriptions: {
    handler: "functions/subscriptions.handler",
    memoryMb: 256,
    timeoutSeconds: 10,
    sealsSecrets: true,
    tables: ["routes", "pop"],
    bucket: false,
  },
} as const satisfies Record<ServiceName, FunctionSpec>;

/**
 * The table every API function reads to authenticate and authorize a request (users and their ACLs) on a
 * stage with auth: linked to each of them besides the tables of its spec (the grants check runs without auth).
 */
export const AUTH_TABLE = "acl";

export type ApiFunctionName = keyof typeof API_FUNCTIONS;

export interface RouteSpec {
  /** API Gateway route key: `METHOD /path/{param}`, exactly as the contract writes it. */
  readonly route: `${"GET" | "POST" | "PUT" | "DELETE"} /${string}`;
  readonly fn: ApiFunctionName;
  /** Open even on stages with IAM auth: liveness probes and load balancers cannot sign requests. */
  readonly public?: true;
}

/** Every endpoint of lib/protocol, on the function of its service. */
export const API_ROUTES: readonly RouteSpec[] = ENDPOINTS.map((e) => ({
  route: routeKey(e) as RouteSpec["route"],
  fn: e.service,
  ...(e.auth === "none" ? { public: true as const } : {}),
}));

/**
 * Who checks a route's caller on a stage: `acl` the function itself (Nimbus signatures and ACLs,
 * lib/http/authorize.ts, NIMBUS_AUTH=acl), `iam` API Gateway (SigV4, IAM auth), `none` nobody: only the
 * routes that need no auth (`GET /health`), and every route of a stage whose settings say `public`.
 */
export function routeProtection(settings: Pick<StageSettings, "auth">, route: RouteSpec): "acl" | "iam" | "none" {
  if (route.public === true || settings.auth === "public") return "none";
  return settings.auth;
}

/** The environment that turns the functions' own auth on (functions/shared/aws-context.ts reads it). */
export function functionAuthEnvironment(settings: Pick<StageSettings, "auth">): { NIMBUS_AUTH: "acl" | "off" } {
  return { NIMBUS_AUTH: settings.auth === "acl" ? "acl" : "off" };
}

/** An API function's reserved concurrency on a stage: its override, or the stage's default. */
export function reservedConcurrency(settings: Pick<StageSettings, "limits">, fn: ApiFunctionName): number {
  return settings.limits.functionConcurrency[fn] ?? settings.limits.reservedConcurrency;
}

/**
 * What a stage reserves of its account's Lambda concurrency: every API function's share and the push channel's
 * (infra/channel.ts gives it the stage's default). It must fit ACCOUNT_RESERVABLE_CONCURRENCY, or the deploy fails.
 */
export function stageReservedConcurrency(settings: Pick<StageSettings, "limits">): number {
  const api = (Object.keys(API_FUNCTIONS) as ApiFunctionName[]).reduce(
    (sum, fn) => sum + reservedConcurrency(settings, fn),
    0,
  );
  return api + settings.limits.reservedConcurrency;
}

export interface ScheduleSpec extends FunctionSpec {
  /** EventBridge schedule expression. */
  readonly schedule: `rate(${string})` | `cron(${string})`;
}

/**
 * Scheduled functions. RocketMQ brokers register every 30 s and expire after 120 s; EventBridge cannot fire
 * more often than once a minute, so registration runs every minute: each run renews the brokers for 120 s,
 * which leaves one run (or one of Lambda's two async retries) to fail before a broker drops out of routes.
 */
export const SCHEDULED_FUNCTIONS = {
  RegisterBrokers: {
    handler: "functions/register-brokers.handler",
    schedule: "rate(1 minute)",
    memoryMb: 256,
    timeoutSeconds: 30,
    tables: ["routes"],
    bucket: false,
  },
  // Hourly, as the local server; 15 min (Lambda's maximum) covers a long first pass over many queues.
  Retention: {
    handler: "functions/retention.handler",
    schedule: "rate(1 hour)",
    memoryMb: 512,
    timeoutSeconds: 900,
    tables: ["routes", "queue-index"],
    bucket: true,
  },
  // RocketMQ checks every 60 s (transactionCheckInterval); EventBridge's shortest period is a minute too.
  // Checks go to producers' inboxes (clients); discarded messages to TRANS_CHECK_MAX_TIME_TOPIC (routes, queue log).
  TransactionCheck: {
    handler: "functions/transaction-check.handler",
    schedule: "rate(1 minute)",
    memoryMb: 256,
    timeoutSeconds: 60,
    tables: ["routes", "queue-index", "transactions", "clients", "connections"],
    bucket: true,
    // A check-back left for a producer: a `checks` hint to its connection.
    channel: true,
  },
  // One lag sample per consumer group a minute (lib/broker/groups/lag-samples.ts): the groups (routes), their
  // offsets and sample rings (offsets), their queues' ends (queue-index).
  SampleLag: {
    handler: "functions/sample-lag.handler",
    schedule: "rate(1 minute)",
    memoryMb: 256,
    timeoutSeconds: 60,
    tables: ["routes", "offsets", "queue-index"],
    bucket: false,
  },
  // The backstop of delayed delivery: each run stays up through its minute while buckets fall due in it.
  // Its appends read the topic's key-index setting (routes: the message index is in the queue log's items).
  DelayedDelivery: {
    handler: "functions/delayed-delivery.handler",
    schedule: "rate(1 minute)",
    memoryMb: 256,
    timeoutSeconds: 60,
    tables: ["routes", "queue-index", "timers"],
    bucket: true,
  },
  // The backstop of subscription delivery (docs/subscriptions.md): each run delivers while receives answer
  // messages. Reads subscriptions and routes, receives and settles over POP, reads the queue log and the bucket,
  // appends dead letters. Lambda targets grant it `lambda:InvokeFunction` by their own resource policy.
  Dispatch: {
    handler: "functions/dispatch.handler",
    schedule: "rate(1 minute)",
    memoryMb: 256,
    timeoutSeconds: 60,
    sealsSecrets: true,
    tables: ["routes", "pop", "queue-index"],
    bucket: true,
  },
} as const satisfies Record<string, ScheduleSpec>;

/**
 * The push channel's function (docs/push-channel.md): `$connect`, `$disconnect` and `$default` of the
 * WebSocket API. Registrations live in `connections`; a registration records the client's heartbeat
 * (`clients`) with the channel's lease, and a consumer's group meets its subscription group (`routes`).
 */
export const CHANNEL_FUNCTIONS = {
  Channel: {
    handler: "functions/channel.handler",
    memoryMb: 256,
    timeoutSeconds: 10,
    tables: ["connections", "clients", "routes"],
    bucket: false,
    channel: true,
  },
} as const satisfies Record<string, FunctionSpec>;

/** The WebSocket API's routes, all on the channel function; the stage's auth is checked on `$connect`. */
export const CHANNEL_ROUTES = ["$connect", "$disconnect", "$default"] as const;

/**
 * Who checks a channel route on a stage. API Gateway authorizes a WebSocket connection once, at `$connect`;
 * the other routes ride on that connection. `iam`: API Gateway checks SigV4 on `$connect`; `acl`: the
 * channel function checks the Nimbus signature of the connect request (API Gateway cannot: a request
 * authorizer would be one more Lambda per connect for the same check) and authorizes each registration
 * frame against the user's ACL.
 */
export function channelRouteProtection(
  settings: Pick<StageSettings, "auth">,
  route: (typeof CHANNEL_ROUTES)[number],
): "acl" | "iam" | "none" {
  if (settings.auth === "public") return "none";
  if (route === "$connect") return settings.auth;
  return settings.auth === "acl" ? "acl" : "none";
}

/** Every function of the stack by component name, for the checks. */
export const ALL_FUNCTIONS: Readonly<Record<string, FunctionSpec>> = {
  ...API_FUNCTIONS,
  ...SCHEDULED_FUNCTIONS,
  ...CHANNEL_FUNCTIONS,
};
