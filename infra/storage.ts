/**
 * @module Where messages and metadata live: one S3 bucket for message batches larger than the inline
 * threshold, and one DynamoDB table per entry of the manifest's `TABLES` (pk string, sk string or number),
 * so a table the broker adds later is provisioned without touching this file.
 */
import { settings } from "./config.js";
import { TABLES } from "./manifest.js";

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

// SSE-S3 (AES-256): free and per request the same price; SSE-KMS would add a KMS call to many S3 requests.
new aws.s3.BucketServerSideEncryptionConfigurationV2("MessagesEncryption", {
  bucket: bucket.name,
  rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }],
});

/** PascalCase component name of a logical table name: `queue-index` -> `QueueIndex`. */
const componentName = (name: string): string =>
  name.replace(/(^|-)([a-z0-9])/g, (_m: string, _dash: string, c: string) => c.toUpperCase());

/** The tables by logical name (the names `lib/broker` opens). */
export const tables: ReadonlyMap<string, sst.aws.Dynamo> = new Map(
  TABLES.map((spec) => [
    spec.name,
    new sst.aws.Dynamo(componentName(spec.name), {
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
        },
      },
    }),
  ]),
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
