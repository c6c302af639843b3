/**
 * @module Where messages and metadata live: one S3 bucket for message batches larger than the inline
 * threshold, and one DynamoDB table per entry of the manifest's `TABLES` (pk string, sk string or number),
 * so a table the broker adds later is provisioned without touching this file.
 */
import { settings } from "./config.js";
import { TABLES } from "./manifest.js";

/** Set when this stage is a slave cell of another stage's broker (docs/topology.md). */
const cell = settings.cell;

/**
 * Objects outlive their retention by one day and then expire: the retention function deletes what it
 * trims, the rule catches what it cannot see (objects of failed appends, whose index item was never
 * written, see docs/queue-log.md). S3 counts lifecycle days from midnight UTC, hence whole days.
 */
const batchExpiryDays = Math.ceil(settings.nimbus.retentionHours / 24) + 1;

export const bucket = new sst.aws.Bucket("Messages", {
  // Only Lambda (signed SDK calls) touches it: no browser, no CORS.
  cors: false,
  lifecycle: [{ id: "expire-batches", prefix: "batches/", expiresIn: `${batchExpiryDays} days` }],
  transform: {
    lifecycle: (args) => {
      // Multipart uploads that never complete are billed until aborted.
      args.rules = $output(args.rules).apply((rules) => [
        ...rules,
        {
          id: "abort-incomplete-uploads",
          status: "Enabled",
          filter: {},
          abortIncompleteMultipartUpload: { daysAfterInitiation: 1 },
        },
        // With replication the bucket is versioned: a deleted batch's old version goes a day later.
        {
          id: "expire-noncurrent-versions",
          status: "Enabled",
          filter: {},
          noncurrentVersionExpiration: { noncurrentDays: 1 },
          expiration: { expiredObjectDeleteMarker: true },
        },
      ]);
    },
    // SST blocks public ACLs and (without `access`) public policies; say so explicitly for every flag.
    publicAccessBlock: {
      blockPublicAcls: true,
      blockPublicPolicy: true,
      ignorePublicAcls: true,
      restrictPublicBuckets: true,
    },
  },
});

// A replica cell's bucket receives the master's objects (S3 replication needs versioning on both ends); a
// stage with replicas sends its batch objects there, with Replication Time Control (15 minutes, 99.99 %).
const replicaBuckets = settings.replicas.filter((r) => r.bucket !== undefined);
const versioning =
  cell !== undefined || replicaBuckets.length > 0
    ? new aws.s3.BucketVersioningV2("MessagesVersioning", {
        bucket: bucket.name,
        versioningConfiguration: { status: "Enabled" },
      })
    : undefined;
if (replicaBuckets.length > 0) {
  const role = new aws.iam.Role("MessagesReplicationRole", {
    assumeRolePolicy: JSON.stringify({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Principal: { Service: "s3.amazonaws.com" }, Action: "sts:AssumeRole" }],
    }),
  });
  new aws.iam.RolePolicy("MessagesReplicationPolicy", {
    role: role.id,
    policy: $jsonStringify({
      Version: "2012-10-17",
      Statement: [
        { Effect: "Allow", Action: ["s3:GetReplicationConfiguration", "s3:ListBucket"], Resource: [bucket.arn] },
        {
          Effect: "Allow",
          Action: ["s3:GetObjectVersionForReplication", "s3:GetObjectVersionAcl", "s3:GetObjectVersionTagging"],
          Resource: [$interpolate`${bucket.arn}/*`],
        },
        {
          Effect: "Allow",
          Action: ["s3:ReplicateObject", "s3:ReplicateDelete", "s3:ReplicateTags"],
          Resource: replicaBuckets.map((r) => `arn:aws:s3:::${r.bucket}/*`),
        },
      ],
    }),
  });
  // S3 refuses a replication configuration on a bucket whose versioning is not enabled yet.
  new aws.s3.BucketReplicationConfig(
    "MessagesReplication",
    {
      bucket: bucket.name,
      role: role.arn,
      rules: replicaBuckets.map((r, i) => ({
        id: `to-${r.region}`,
        priority: i,
        status: "Enabled",
        filter: { prefix: "batches/" },
        deleteMarkerReplication: { status: "Enabled" },
        destination: {
          bucket: `arn:aws:s3:::${r.bucket}`,
          replicationTime: { status: "Enabled", time: { minutes: 15 } },
          metrics: { status: "Enabled", eventThreshold: { minutes: 15 } },
        },
      })),
    },
    versioning ? { dependsOn: [versioning] } : {},
  );
}

// SSE-S3 (AES-256): free and per request the same price; SSE-KMS would add a KMS call to many S3 requests.
new aws.s3.BucketServerSideEncryptionConfigurationV2("MessagesEncryption", {
  bucket: bucket.name,
  rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }],
});

/** PascalCase component name of a logical table name: `queue-index` -> `QueueIndex`. */
const componentName = (name: string): string =>
  name.replace(/(^|-)([a-z0-9])/g, (_m: string, _dash: string, c: string) => c.toUpperCase());

/** The tables a slave cell does not own: the master stage's, linked by name (its replicas, or its name server's). */
const nameServerRegion = cell?.nameServer.region;
const nameServerProvider =
  nameServerRegion === undefined
    ? undefined
    : new aws.Provider("NameServerRegion", { region: nameServerRegion as aws.Region });
const linkedTables: Readonly<Record<string, { tableName: string; provider?: aws.Provider }>> =
  cell === undefined
    ? {}
    : {
        "queue-index": { tableName: cell.replicaOf.queueIndexTable },
        offsets: { tableName: cell.replicaOf.offsetsTable },
        routes: {
          tableName: cell.nameServer.routesTable,
          ...(nameServerProvider ? { provider: nameServerProvider } : {}),
        },
        clients: {
          tableName: cell.nameServer.clientsTable,
          ...(nameServerProvider ? { provider: nameServerProvider } : {}),
        },
      };
/**
 * The tables slave cells read in their regions: DynamoDB global tables (one write here, one per replica). The
 * routes and clients go too, so a cell keeps its routes, and takes heartbeats, when this region is down.
 */
const REPLICATED = new Set(["queue-index", "offsets", "routes", "clients"]);

function ownTable(spec: (typeof TABLES)[number]): sst.aws.Dynamo {
  return new sst.aws.Dynamo(componentName(spec.name), {
    fields: { pk: "string", sk: spec.sortKeyType },
    primaryIndex: { hashKey: "pk", rangeKey: "sk" },
    // DynamoDB TTL deletes late (hours); it only tidies up, liveness never depends on it.
    ...(spec.ttlAttribute === undefined ? {} : { ttl: spec.ttlAttribute }),
    deletionProtection: settings.production,
    transform: {
      table: (args) => {
        // SST turns point-in-time recovery on everywhere; it is billed per GB-month, so production only.
        args.pointInTimeRecovery = { enabled: settings.production };
        // On-demand (SST's default, said again): cost follows traffic, an idle stage costs storage only.
        args.billingMode = "PAY_PER_REQUEST";
        if (REPLICATED.has(spec.name) && settings.replicas.length > 0) {
          // A global table: every write here is replicated to each region (billed there again).
          args.replicas = settings.replicas.map((r) => ({ regionName: r.region }));
          args.streamEnabled = true;
          args.streamViewType = "NEW_AND_OLD_IMAGES";
        }
      },
    },
  });
}

/** The tables by logical name (the names `lib/broker` opens): the stage's own, or for a slave cell linked ones. */
export const tables: ReadonlyMap<string, sst.aws.Dynamo> = new Map(
  TABLES.map((spec) => {
    const linked = linkedTables[spec.name];
    return [
      spec.name,
      linked === undefined
        ? ownTable(spec)
        : sst.aws.Dynamo.get(
            componentName(spec.name),
            linked.tableName,
            linked.provider ? { provider: linked.provider } : {},
          ),
    ];
  }),
);

/** JSON `{ logical name: region }` of the tables in another region (a slave cell's name server tables). */
export const tableRegionsJson = JSON.stringify(
  nameServerRegion === undefined ? {} : { routes: nameServerRegion, clients: nameServerRegion },
);

/** The table of logical name `name`; fails the deploy on a name that `BROKER_TABLES` does not have. */
export function table(name: string): sst.aws.Dynamo {
  const found = tables.get(name);
  if (found === undefined) throw new Error(`infra: no table "${name}" in TABLES (infra/manifest.ts)`);
  return found;
}

/** JSON `{ logical name: physical name }`, the `NIMBUS_TABLES` of every function. */
export const tableNamesJson = $jsonStringify(
  $output(Object.fromEntries([...tables].map(([name, t]) => [name, t.name]))),
);
