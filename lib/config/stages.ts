/**
 * @module Per-stage settings: where a stage runs (AWS region), how it is guarded (retain, protect,
 * point-in-time recovery, auth, throttling, CORS) and how its broker behaves (`NimbusConfig`). The one place both
 * the SST stack (sst.config.ts, infra/) and the local server read, validated by zod when this module loads,
 * so a typo fails `sst install`, `sst deploy` and the tests alike.
 *
 * @example
 * const settings = stageSettings("production"); // a named stage
 * const dev = stageSettings("alice"); // any other stage name: DEFAULT_STAGE
 */
import { z } from "zod";
import { LOOPBACK_TARGETS_ON_AWS, NimbusConfigSchema, TWO_MASTERS } from "./nimbus-config.js";

const region = z.string().regex(/^[a-z]{2}(?:-[a-z]+)+-\d$/, "an AWS region such as us-east-1");
const tableName = z.string().regex(/^[a-zA-Z0-9_.-]{3,255}$/, "a DynamoDB table name");

/**
 * A replica of this stage's data in another region (docs/topology.md): the queue index and offsets become
 * DynamoDB global tables with a replica there, and, once `bucket` names the replica cell's bucket, batch
 * objects replicate to it (S3 Replication Time Control: 99.99 % within 15 minutes).
 */
const ReplicaSchema = z.object({ region, bucket: z.string().min(3).max(63).optional() }).strict();

/**
 * A slave cell: this stage serves a read-only slave (brokerId > 0) of a broker whose master is another stage,
 * in another region. It registers into the master stage's routes table and reads the master's data from
 * the replicas in its own region.
 */
const CellSchema = z
  .object({
    brokerName: z.string().regex(/^[%|a-zA-Z0-9_-]{1,127}$/),
    brokerId: z.number().int().min(1),
    /**
     * The master stage's routes and clients tables (its name server). Without `region` the cell reads their
     * replicas in its own region (the master stage replicates them with its data), so it keeps its routes
     * when the master's region is down; with `region`, it reads them there.
     */
    nameServer: z.object({ region: region.optional(), routesTable: tableName, clientsTable: tableName }).strict(),
    /** The master stage's queue index and offsets tables, whose replicas in this region this cell reads. */
    replicaOf: z.object({ queueIndexTable: tableName, offsetsTable: tableName }).strict(),
  })
  .strict();

/**
 * What the stages' limits are drawn from (docs/deploy.md, "Throttling and reserved concurrency"). A warm 1 KiB
 * append writes 3 units: its item (2, on the queue's partition key) and the ADD on the queue's offset counter
 * (1, on a key of its own). DynamoDB serves 1,000 write units per second on one key, so a hot queue takes about
 * 500 appends/s whatever the number of writers; `npm run bench -- --suite lambda-concurrency` measured 506-563/s
 * at 16-64 writers on one queue, 0 failed conditional writes, 3.00 units per append (docs/benchmarks.md), and a
 * container busy 17-22 ms (p50) and 32-43 ms (p99) per single append at 1-8 writers with 5/15 ms DynamoDB.
 */
export const SEND_CAPACITY = {
  /** DynamoDB's write ceiling on one partition key, in write units per second. */
  keyWriteUnitsPerSecond: 1000,
  /** The units a 1 KiB append writes on its queue's key (the item; the counter's 1 unit is on its own key). */
  queueKeyUnitsPerAppend: 2,
  /** A Send container's busy time per warm single send, p50 and p99 (the append's two DynamoDB round trips). */
  sendP50Ms: 20,
  sendP99Ms: 50,
} as const;

/** One hot queue's ceiling: 1,000 / 2 = 500 appends/s (a batch of messages is one append). */
export const HOT_QUEUE_APPENDS_PER_SECOND = SEND_CAPACITY.keyWriteUnitsPerSecond / SEND_CAPACITY.queueKeyUnitsPerAppend;

/** Containers that hold one hot queue at its ceiling: 500/s x 20 ms = 10; more only wait on its key. */
export const CONTAINERS_PER_HOT_QUEUE = Math.ceil((HOT_QUEUE_APPENDS_PER_SECOND * SEND_CAPACITY.sendP50Ms) / 1000);

/**
 * Send's reserved concurrency for a stage's steady rate: every request finds a container at the p99 busy time,
 * twice over for the burst API Gateway lets through (production: 2,000/s x 50 ms x 2 = 200).
 */
export function sendConcurrencyFor(rateLimit: number): number {
  return Math.ceil(((rateLimit * SEND_CAPACITY.sendP99Ms) / 1000) * 2);
}

/** What one account can reserve by default: Lambda's 1,000 concurrent executions less the 100 kept unreserved. */
export const ACCOUNT_RESERVABLE_CONCURRENCY = 900;

/**
 * API Gateway's stage throttling (steady requests per second and burst, for every route; over them a caller
 * gets 429, which the SDK retries as SYSTEM_BUSY) and each API function's reserved concurrency (its share of
 * the account's Lambda concurrency, and its cap), with overrides by function name (infra/manifest.ts).
 */
const LimitsSchema = z
  .object({
    rateLimit: z.number().positive().max(10_000),
    burstLimit: z.number().int().min(1).max(5_000),
    reservedConcurrency: z.number().int().min(1).max(1000),
    functionConcurrency: z.record(z.string(), z.number().int().min(1).max(1000)).default({}),
  })
  .strict();

/**
 * The gRPC endpoint on AWS (docs/grpc.md, docs/deploy.md): an ECS Fargate service (arm64, 0.25 vCPU, 0.5 GB)
 * running `nimbus proxy` behind a Network Load Balancer that ends TLS (ALPN h2) with the stage's ACM
 * certificate for `domain`. The one part of Nimbus billed by the hour, not per request: off unless set.
 */
const GrpcSchema = z
  .object({
    /** The host name clients dial (`endpoints: "<domain>:443"`), covered by `certificateArn`. */
    domain: z.string().regex(/^[a-z0-9.-]{1,253}$/, "a DNS name such as mq.example.com"),
    /** An ACM certificate in the stage's region for `domain`. */
    certificateArn: z.string().regex(/^arn:aws:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]{36}$/),
    /** Proxy tasks (each one 0.25 vCPU, 0.5 GB). */
    tasks: z.number().int().min(1).max(10).default(1),
    /**
     * RocketMQ 4.x's remoting protocol through the same tasks and load balancer (docs/remoting.md), a port per
     * broker from 9876: `tls` the load balancer ends TLS with `certificateArn` (clients set `useTLS`), `tcp` it
     * passes the connections in clear. Absent: not served.
     */
    remoting: z.enum(["tls", "tcp"]).optional(),
  })
  .strict();

/** A browser origin: scheme and host (and port), no path, as the `Origin` header carries it. */
const origin = z.string().regex(/^https?:\/\/[^/\s]+$/, "an origin such as https://console.example.com");

export const StageSettingsSchema = z
  .object({
    /** AWS region of every resource of the stage. */
    region,
    /**
     * Production data: resources are retained by `sst remove` and protected from it, tables get
     * point-in-time recovery and deletion protection. Other stages are disposable.
     */
    production: z.boolean(),
    /**
     * How every API route but `GET /health` is protected (docs/security.md): `acl` (the default) Nimbus-signed
     * requests checked against the stage's users and ACLs; `iam` AWS SigV4 checked by API Gateway (any IAM
     * principal of the account allowed, all or nothing); `public` no auth at all, which a stage must ask for
     * by name and which `sst deploy` warns about.
     */
    auth: z.enum(["acl", "iam", "public"]).default("acl"),
    /** Limits against floods and runaway bills: API Gateway throttling and Lambda reserved concurrency. */
    limits: LimitsSchema.default({ rateLimit: 50, burstLimit: 100, reservedConcurrency: 5, functionConcurrency: {} }),
    /** Other origins of a web console (besides the stage's own console site, which infra/api.ts always allows). */
    consoleOrigins: z.array(origin).default([]),
    /** The broker settings the handlers get (brokers, cluster, inline threshold, retention, auto-create). */
    nimbus: NimbusConfigSchema,
    /** Regions holding a replica of this stage's data, for slave cells there. */
    replicas: z.array(ReplicaSchema).default([]),
    /** Set when this stage is a slave cell of another stage's broker. */
    cell: CellSchema.optional(),
    /** RocketMQ 5's gRPC endpoint as a container service; absent: none (the default). */
    grpc: GrpcSchema.optional(),
  })
  .strict()
  .refine(
    (s) =>
      s.cell === undefined ||
      (s.nimbus.brokers.length === 1 &&
        s.nimbus.brokers[0]?.brokerName === s.cell.brokerName &&
        s.nimbus.brokers[0]?.brokerId === s.cell.brokerId),
    "a cell's nimbus.brokers is exactly its broker (brokerName and brokerId)",
  )
  // On an ACL stage the proxy runs with --auth: RocketMQ 4.x's signature has no date or nonce, so a signed request
  // captured in clear could be replayed at will; signed remoting requests cross the internet inside TLS only.
  .refine(
    (s) => s.grpc?.remoting !== "tcp" || s.auth !== "acl",
    "grpc.remoting on an ACL stage is tls: a RocketMQ 4.x signature captured in clear could be replayed",
  )
  .refine((s) => s.cell === undefined || s.replicas.length === 0, "a slave cell holds no replicas of its own")
  .refine((s) => s.replicas.every((r) => r.region !== s.region), "a replica is in another region")
  // A stage runs on Lambda; `nimbus dev` reaches local webhooks by its own default (unset here) or --target-networks.
  .refine((s) => s.nimbus.subscriptionTargetNetworks !== "loopback", LOOPBACK_TARGETS_ON_AWS);

export type CellSettings = z.output<typeof CellSchema>;
export type GrpcSettings = z.output<typeof GrpcSchema>;

export type StageSettings = z.output<typeof StageSettingsSchema>;
export type StageSettingsInput = z.input<typeof StageSettingsSchema>;

/** Any stage not named in `NAMED_STAGES`: personal stages (`sst deploy --stage alice`), `ci`, `dev`. */
const DEFAULT_STAGE: StageSettingsInput = {
  region: "us-east-1",
  production: false,
  // Authenticated like every stage: a personal stage's URL is on the internet too.
  auth: "acl",
  // One day is enough to try things and keeps a forgotten stage cheap.
  nimbus: { cluster: "DefaultCluster", brokers: TWO_MASTERS, autoCreateTopic: true, retentionHours: 24 },
};

const NAMED_STAGES: Record<string, StageSettingsInput> = {
  staging: {
    region: "us-east-1",
    production: false,
    auth: "acl",
    // 200 sends/s: a fifth of one hot queue's ceiling, the Send containers for it (20) and as many for the rest.
    limits: {
      rateLimit: 200,
      burstLimit: 400,
      reservedConcurrency: 20,
      functionConcurrency: { Send: sendConcurrencyFor(200) },
    },
    nimbus: { cluster: "DefaultCluster", brokers: TWO_MASTERS, autoCreateTopic: true, retentionHours: 72 },
  },
  production: {
    region: "us-east-1",
    production: true,
    auth: "acl",
    limits: {
      // Four hot queues' worth (a default topic has 8 queues: 4,000 appends/s if its keys spread).
      rateLimit: 2000,
      burstLimit: 4000,
      // The control plane (routes, topics, clients, transactions, ACLs, the push channel) is light.
      reservedConcurrency: 20,
      functionConcurrency: {
        // 200: the rate at the p99 busy time, twice over; 10 of them already hold one hot queue at its ceiling.
        Send: sendConcurrencyFor(2000),
        // A POP receive may wait 20 s: Pull's cap is the consumers long-polling at once.
        Pull: 200,
        // Route lookups and offset commits come from every client.
        NameServer: 50,
        Offsets: 50,
      },
    },
    // As RocketMQ advises for production: topics are created on purpose (PUT /topics/{topic}), not by a typo.
    nimbus: {
      cluster: "DefaultCluster",
      brokers: TWO_MASTERS,
      autoCreateTopic: false,
      inlineThresholdBytes: 8 * 1024,
      retentionHours: 72,
    },
  },
};

function parseStage(name: string, input: StageSettingsInput): StageSettings {
  const result = StageSettingsSchema.safeParse(input);
  if (!result.success) throw new Error(`stage "${name}" in lib/config/stages.ts: ${z.prettifyError(result.error)}`);
  return result.data;
}

/** Validated at load: a bad entry fails every reader at once, not one deploy later. */
const PARSED: ReadonlyMap<string, StageSettings> = new Map(
  Object.entries(NAMED_STAGES).map(([name, input]) => [name, parseStage(name, input)]),
);
const PARSED_DEFAULT = parseStage("(default)", DEFAULT_STAGE);

/** The stages with settings of their own; every other stage name gets the default settings. */
export const NAMED_STAGE_NAMES: readonly string[] = [...PARSED.keys()];

/** The settings of `stage`: its own entry, or the default one. */
export function stageSettings(stage: string): StageSettings {
  return PARSED.get(stage) ?? PARSED_DEFAULT;
}
