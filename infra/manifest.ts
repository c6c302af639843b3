/**
 * @module What runs on AWS, as plain data: each Lambda function (handler, size, the resources it may
 * touch), each API route and the function that serves it, each schedule. The SST modules (api.ts,
 * schedules.ts, functions.ts) build resources from it; the offline checks (test/infra/) read it without
 * SST, to compare the routes with the API contract, bundle every handler, and check that each function
 * is granted exactly the tables and bucket it uses.
 */

/** A Lambda function. Its `tables` and `bucket` are all it is linked to, hence all IAM lets it use. */
export interface FunctionSpec {
  /** SST handler: path from the repo root, then the export. */
  readonly handler: `functions/${string}.handler`;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  /** Logical table names (lib/broker/tables.ts) the function reads or writes. */
  readonly tables: readonly string[];
  /** Whether it reads, writes or deletes message batches in the bucket. */
  readonly bucket: boolean;
}

/**
 * API functions, one per handler module (not one per route): fewer cold starts, and a module's routes
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
  Send: {
    handler: "functions/send.handler",
    memoryMb: 512,
    timeoutSeconds: 10,
    tables: ["routes", "queue-index"],
    bucket: true,
  },
  Pull: {
    handler: "functions/pull.handler",
    memoryMb: 512,
    timeoutSeconds: 10,
    tables: ["routes", "queue-index"],
    bucket: true,
  },
  // Progress reads the store time of each group's last consumed message: a batch, maybe in the bucket.
  Offsets: {
    handler: "functions/offsets.handler",
    memoryMb: 256,
    timeoutSeconds: 15,
    tables: ["offsets", "routes", "queue-index"],
    bucket: true,
  },
  Clients: {
    handler: "functions/clients.handler",
    memoryMb: 256,
    timeoutSeconds: 10,
    tables: ["clients"],
    bucket: false,
  },
} as const satisfies Record<string, FunctionSpec>;

export type ApiFunctionName = keyof typeof API_FUNCTIONS;

export interface RouteSpec {
  /** API Gateway route key: `METHOD /path/{param}`, exactly as the contract writes it. */
  readonly route: `${"GET" | "POST" | "PUT" | "DELETE"} /${string}`;
  readonly fn: ApiFunctionName;
  /** Open even on stages with IAM auth: liveness probes and load balancers cannot sign requests. */
  readonly public?: true;
}

/** Every route of the API (../shared/API.md and its documented extensions in docs/api.md). */
export const API_ROUTES: readonly RouteSpec[] = [
  { route: "GET /health", fn: "NameServer", public: true },
  { route: "GET /cluster", fn: "NameServer" },
  { route: "GET /topics/{topic}/route", fn: "NameServer" },
  { route: "GET /topics", fn: "Topics" },
  { route: "PUT /topics/{topic}", fn: "Topics" },
  { route: "DELETE /topics/{topic}", fn: "Topics" },
  { route: "GET /topics/{topic}/status", fn: "Topics" },
  { route: "POST /send", fn: "Send" },
  { route: "POST /pull", fn: "Pull" },
  { route: "GET /offsets/{group}/{topic}", fn: "Offsets" },
  { route: "PUT /offsets/{group}/{topic}", fn: "Offsets" },
  { route: "GET /groups/{group}/progress", fn: "Offsets" },
  { route: "POST /heartbeat", fn: "Clients" },
  { route: "POST /unregister", fn: "Clients" },
  { route: "GET /groups/{group}/consumers", fn: "Clients" },
];

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
} as const satisfies Record<string, ScheduleSpec>;

/** Every function of the stack by component name, for the checks. */
export const ALL_FUNCTIONS: Readonly<Record<string, FunctionSpec>> = { ...API_FUNCTIONS, ...SCHEDULED_FUNCTIONS };
