/**
 * @module DynamoDB and S3 emulators on free loopback ports: for DynamoDB either dynalite (in this process, in
 * memory) or Amazon's DynamoDB Local (a child JVM, in memory: `dynamodb-local.ts`), and s3rver (in this
 * process, files in a temporary folder). `stop()` closes every server, connection and the folder (and
 * stops the JVM), so a test process exits on its own.
 *
 * Two fidelity fixes to s3rver's file store, everything else is s3rver as shipped:
 * - it lists keys in the order it walks its folders (`a/b/c` before `a/b`, `a/b` before `a-c`), while S3
 *   lists them in UTF-8 byte order: we replace the listing with one that sorts as S3 does;
 * - DeleteObjects deletes its keys concurrently and each delete removes folders left empty, so two keys
 *   in one folder race on the same `rmdir` and the request fails with a 500: we let that race pass. A truncated ListObjectsV2 page still
 * needs `--openssl-legacy-provider` for s3rver's continuation-token cipher (`npm test` sets it).
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import dynalite from "dynalite";
import S3rver, { type S3rverListResult, type S3rverStore } from "s3rver";
import type { AwsStorageOptions } from "../../lib/storage/aws/index.js";
import { type KeyLimitedDynamo, startKeyLimitedDynamo } from "./dynamo-key-limits.js";
import { startDynamoDBLocal } from "./dynamodb-local.js";

/** Which emulator plays DynamoDB: dynalite (fast, in process) or DynamoDB Local (Amazon's, stricter). */
export type DynamoBackend = "dynalite" | "dynamodb-local";

export const DYNAMO_BACKEND_LABEL: Record<DynamoBackend, string> = {
  dynalite: "dynalite",
  "dynamodb-local": "DynamoDB Local",
};

export interface Emulators {
  dynamo: DynamoBackend;
  /**
   * The DynamoDB emulator's URL, e.g. `http://127.0.0.1:40123`: by default the per-key limits' proxy in front of it
   * (dynamo-key-limits.ts), so a hot key is throttled as on DynamoDB.
   */
  dynamoEndpoint: string;
  /** The per-key limits in front of the emulator (absent when started with `keyLimits: false`). */
  keyLimits: KeyLimitedDynamo | undefined;
  /** s3rver's URL (use path-style addressing). */
  s3Endpoint: string;
  stop(): Promise<void>;
}

/**
 * The AWS adapters' timeouts on these emulators: production's (2 s to connect, 5 s a DynamoDB request) are
 * for AWS, while an emulator on a loaded 2-core machine can be descheduled for longer; a test must not
 * depend on machine speed. Tests about timeouts set their own.
 */
export const EMULATOR_TIMEOUTS = { connectMs: 30_000, dynamoRequestMs: 60_000, s3RequestMs: 60_000 } as const;

/** The credentials s3rver checks signatures against; dynalite accepts anything. */
export const EMULATOR_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;

/** Options for `createAwsStorage` (and `ensureTables`/`ensureBucket`) on these emulators. */
export function emulatorStorageOptions(
  emulators: Emulators,
  names: { bucket: string; tablePrefix: string },
): AwsStorageOptions {
  return {
    region: "us-east-1",
    ...names,
    dynamoEndpoint: emulators.dynamoEndpoint,
    s3Endpoint: emulators.s3Endpoint,
    credentials: EMULATOR_CREDENTIALS,
  };
}

const LOOPBACK = "127.0.0.1";

/** A DynamoDB emulator that runs: its URL and how to stop it. */
interface RunningDynamo {
  endpoint: string;
  stop(): Promise<void>;
}

async function startDynalite(): Promise<RunningDynamo> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, LOOPBACK, () => resolve());
  });
  return {
    endpoint: `http://${LOOPBACK}:${(server.address() as AddressInfo).port}`,
    stop: () => closeServer(server),
  };
}

export interface EmulatorOptions {
  /** DynamoDB's per-partition-key limits in front of the emulator (default on: dynamo-key-limits.ts). */
  keyLimits?: boolean;
}

export async function startEmulators(
  backend: DynamoBackend = "dynalite",
  options: EmulatorOptions = {},
): Promise<Emulators> {
  const directory = await mkdtemp(join(tmpdir(), "nimbus-s3rver-"));
  let dynamo: RunningDynamo;
  let keyLimits: KeyLimitedDynamo | undefined;
  try {
    const emulator = backend === "dynalite" ? await startDynalite() : await startDynamoDBLocal();
    dynamo = emulator;
    if (options.keyLimits !== false) {
      keyLimits = await startKeyLimitedDynamo(emulator.endpoint).catch(async (err: unknown) => {
        await emulator.stop();
        throw err;
      });
      const limits = keyLimits;
      dynamo = {
        endpoint: limits.endpoint,
        stop: async () => {
          await limits.stop();
          await emulator.stop();
        },
      };
    }
  } catch (err) {
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
  const s3 = new S3rver({ address: LOOPBACK, port: 0, silent: true, directory, vhostBuckets: false });
  listInByteOrder(s3.store);
  tolerateDeleteRaces(s3.store);
  let s3Port: number;
  try {
    s3Port = (await s3.run()).port;
  } catch (err) {
    await dynamo.stop();
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
  return {
    dynamo: backend,
    dynamoEndpoint: dynamo.endpoint,
    keyLimits,
    s3Endpoint: `http://${LOOPBACK}:${s3Port}`,
    async stop() {
      await Promise.all([dynamo.stop(), s3.httpServer === undefined ? undefined : closeServer(s3.httpServer)]);
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Closes a server and drops its keep-alive connections (a client not yet destroyed must not keep it up). */
function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  server.closeAllConnections();
  return closed;
}

/** Where s3rver keeps an object's bytes: `<bucket>/<key>._S3rver_object`. */
const OBJECT_SUFFIX = "._S3rver_object";

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Replaces s3rver's listing (folder-walk order) by S3's: keys in UTF-8 byte order, then paged. */
function listInByteOrder(store: S3rverStore): void {
  const shipped = store.listObjects.bind(store);
  store.listObjects = async (bucket, options): Promise<S3rverListResult> => {
    // Nimbus never lists with a delimiter; leave that path as shipped.
    if (options.delimiter) return shipped(bucket, options);
    const prefix = options.prefix ?? "";
    const startAfter = options.startAfter ?? "";
    const maxKeys = options.maxKeys ?? Number.POSITIVE_INFINITY;
    const keys = (await keysUnder(store.getBucketPath(bucket), "", prefix))
      .filter((key) => key.startsWith(prefix) && byteOrder(key, startAfter) > 0)
      .sort(byteOrder);
    const page = keys.slice(0, maxKeys);
    const found = await Promise.all(
      page.map(async (key) => {
        // A key deleted since the folder walk is simply not listed, as s3rver itself does.
        const metadata = await store.getMetadata(bucket, key).catch(() => undefined);
        if (metadata === undefined) return undefined;
        const size = Number(metadata["content-length"]);
        return { key, size, lastModifiedDate: new Date(String(metadata["last-modified"])), metadata };
      }),
    );
    return {
      objects: found.filter((o) => o !== undefined),
      commonPrefixes: [],
      isTruncated: keys.length > page.length,
    };
  };
}

/** A folder already removed (or emptied) by a concurrent delete is not an error: the object is gone. */
function tolerateDeleteRaces(store: S3rverStore): void {
  const shipped = store.deleteObject.bind(store);
  store.deleteObject = async (bucket, key) => {
    try {
      await shipped(bucket, key);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code !== "ENOENT" && code !== "ENOTEMPTY") throw err;
    }
  };
}

/** Every object key in `root/rel`, skipping folders that cannot hold a key starting with `prefix`. */
async function keysUnder(root: string, rel: string, prefix: string): Promise<string[]> {
  const entries = await readdir(join(root, rel), { withFileTypes: true });
  const keys: string[] = [];
  for (const entry of entries) {
    const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) {
      const folder = `${path}/`;
      if (folder.startsWith(prefix) || prefix.startsWith(folder)) keys.push(...(await keysUnder(root, path, prefix)));
    } else if (entry.name.endsWith(OBJECT_SUFFIX)) {
      keys.push(path.slice(0, -OBJECT_SUFFIX.length));
    }
  }
  return keys;
}
