/**
 * @module How the AWS adapter reaches its resources (options, physical table names, SDK clients), and
 * how emulators and `nimbus dev --storage aws` create them: `ensureTables` and `ensureBucket`.
 * Production tables and buckets come from the infrastructure code, never from here.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  type TableDescription,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { type BucketLocationConstraint, CreateBucketCommand, HeadBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { TableSpec } from "../table.js";
import { DEFAULT_DYNAMO_ATTEMPTS, type RetryBackoff, retryStrategy } from "./retry.js";
import { translateError } from "./sdk-errors.js";

/** Plain options: `lib/` never reads the environment; the caller (handler, local server, test) does. */
export interface AwsStorageOptions {
  region: string;
  bucket: string;
  /** Prepended to a spec's logical name to get the physical table name (default ""). */
  tablePrefix?: string;
  /** Logical spec name → physical table name; wins over `tablePrefix`. */
  tableNames?: Record<string, string>;
  /** Logical spec name → the region of a table that is not in `region` (a slave cell's name server tables). */
  tableRegions?: Record<string, string>;
  /** e.g. an emulator's `http://127.0.0.1:port`; default: the region's AWS endpoint. */
  dynamoEndpoint?: string;
  /** e.g. an emulator's URL; path-style addressing is used when set. */
  s3Endpoint?: string;
  /**
   * Whether an object PUT still out after most recent PUTs answered is sent again beside itself (the queue log's
   * hedged PUTs, lib/broker/queue-log/hedged-puts.ts). Default: on AWS's own S3 endpoint, yes (S3 replaces an
   * object atomically); with `s3Endpoint` set, no: an emulator or another S3-compatible store may rewrite an
   * object in place, and a reader could see the late twin half-written.
   */
  hedgeObjectPuts?: boolean | undefined;
  /** Default: the SDK's provider chain (Lambda role, profile, environment). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /**
   * Attempts per request, retries of throttling and 5xx included (default: DynamoDB 6, DEFAULT_DYNAMO_ATTEMPTS;
   * S3 the SDK's 3).
   */
  maxAttempts?: number;
  /**
   * The DynamoDB client's retry back-off (lib/storage/aws/retry.ts; default DEFAULT_RETRY_BACKOFF: 50 ms bases,
   * at most 2 s waited, no retry 10 s after the first attempt); the benchmark stretches it with its clock.
   */
  retryBackoff?: Partial<RetryBackoff>;
  /**
   * Per attempt: how long a connection may take to open, and how long a request may wait for the service
   * without a byte (a hung connection fails as SYSTEM_BUSY instead of holding an append, and a Lambda, until
   * the function's own timeout). Defaults: DEFAULT_AWS_TIMEOUTS.
   */
  timeouts?: Partial<AwsTimeouts>;
}

export interface AwsTimeouts {
  connectMs: number;
  dynamoRequestMs: number;
  s3RequestMs: number;
}

/**
 * DynamoDB answers in milliseconds, so 5 s without a byte is a hung connection; S3 gets 15 s (a 4 MiB PUT on a
 * slow link). No DynamoDB retry starts 10 s after a request's first attempt (DEFAULT_RETRY_BACKOFF), so an append gives up
 * well inside Lambda's 30 s API timeout.
 */
export const DEFAULT_AWS_TIMEOUTS: AwsTimeouts = { connectMs: 2_000, dynamoRequestMs: 5_000, s3RequestMs: 15_000 };

/** The SDK's `requestHandler` options: its Node handler with our timeouts. */
function requestHandler(options: AwsStorageOptions, service: "dynamo" | "s3") {
  const t = { ...DEFAULT_AWS_TIMEOUTS, ...options.timeouts };
  return {
    connectionTimeout: t.connectMs,
    requestTimeout: service === "dynamo" ? t.dynamoRequestMs : t.s3RequestMs,
    // Without it the SDK's handler only logs a warning and keeps waiting.
    throwOnRequestTimeout: true,
  };
}

/** The physical name of the table for logical name `name`. */
export function physicalTableName(options: AwsStorageOptions, name: string): string {
  return options.tableNames?.[name] ?? `${options.tablePrefix ?? ""}${name}`;
}

export function createDynamoClient(options: AwsStorageOptions, region = options.region): DynamoDBClient {
  return new DynamoDBClient({
    region,
    ...(options.dynamoEndpoint === undefined ? {} : { endpoint: options.dynamoEndpoint }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    retryStrategy: retryStrategy(options.maxAttempts ?? DEFAULT_DYNAMO_ATTEMPTS, options.retryBackoff),
    requestHandler: requestHandler(options, "dynamo"),
  });
}

export function createS3Client(options: AwsStorageOptions): S3Client {
  return new S3Client({
    region: options.region,
    ...(options.s3Endpoint === undefined ? {} : { endpoint: options.s3Endpoint, forcePathStyle: true }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    requestHandler: requestHandler(options, "s3"),
    // Checksums only where S3 demands them: emulators (s3rver) do not understand the newer defaults.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

/** How long `ensureTables` waits for a table to become ACTIVE (real DynamoDB takes seconds). */
const ACTIVE_TIMEOUT_MS = 120_000;

/**
 * Creates each table if missing (on-demand billing, `pk` HASH S, `sk` RANGE S or N as the spec says)
 * and waits until all are ACTIVE. An existing table with another key schema is an error.
 */
export async function ensureTables(options: AwsStorageOptions, specs: readonly TableSpec[]): Promise<void> {
  const client = createDynamoClient(options);
  try {
    await Promise.all(specs.map((spec) => ensureTable(client, physicalTableName(options, spec.name), spec)));
  } finally {
    client.destroy();
  }
}

async function ensureTable(client: DynamoDBClient, tableName: string, spec: TableSpec): Promise<void> {
  const skType = spec.sortKeyType === "number" ? "N" : "S";
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: skType },
        ],
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
      }),
    );
  } catch (err) {
    if ((err as { name?: unknown }).name !== "ResourceInUseException") {
      throw translateError(err, `CreateTable "${tableName}"`);
    }
  }
  const table = await waitActive(client, tableName);
  const actual = table.AttributeDefinitions?.find((d) => d.AttributeName === "sk")?.AttributeType;
  if (actual !== skType) {
    throw new NimbusError(ErrorCode.SYSTEM_ERROR, `table "${tableName}" exists with sk type ${actual}, not ${skType}`);
  }
  if (spec.ttlAttribute !== undefined) await enableTtl(client, tableName, spec.ttlAttribute);
}

async function waitActive(client: DynamoDBClient, tableName: string): Promise<TableDescription> {
  const deadline = Date.now() + ACTIVE_TIMEOUT_MS;
  for (let delay = 20; ; delay = Math.min(delay * 2, 1000)) {
    let table: TableDescription | undefined;
    try {
      table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    } catch (err) {
      throw translateError(err, `DescribeTable "${tableName}"`);
    }
    if (table?.TableStatus === "ACTIVE") return table;
    if (Date.now() > deadline) {
      throw new NimbusError(ErrorCode.SYSTEM_BUSY, `table "${tableName}" is not ACTIVE after ${ACTIVE_TIMEOUT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Best effort: emulators lack `UpdateTimeToLive`, and TTL is only a lazy clean-up, never relied on. */
async function enableTtl(client: DynamoDBClient, tableName: string, attribute: string): Promise<void> {
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: attribute, Enabled: true },
      }),
    );
  } catch {
    // Already enabled, or not supported by the emulator: either way there is nothing to do.
  }
}

/** Creates the bucket if missing; a bucket we already own is fine, one owned by someone else is not. */
export async function ensureBucket(options: AwsStorageOptions): Promise<void> {
  const client = createS3Client(options);
  try {
    await client.send(
      new CreateBucketCommand({
        Bucket: options.bucket,
        // us-east-1 is the one region that refuses an explicit location constraint.
        ...(options.region === "us-east-1"
          ? {}
          : { CreateBucketConfiguration: { LocationConstraint: options.region as BucketLocationConstraint } }),
      }),
    );
  } catch (err) {
    const name = (err as { name?: unknown }).name;
    if (name === "BucketAlreadyOwnedByYou") return;
    // s3rver answers BucketAlreadyExists for its own buckets; on AWS it means another owner. HEAD tells.
    if (name !== "BucketAlreadyExists") throw translateError(err, `CreateBucket "${options.bucket}"`);
    try {
      await client.send(new HeadBucketCommand({ Bucket: options.bucket }));
    } catch (headErr) {
      throw translateError(headErr, `bucket "${options.bucket}" exists but is not ours`);
    }
  } finally {
    client.destroy();
  }
}
