/**
 * @module The AWS adapter's test fixture: `createAwsStorage` against s3rver and a DynamoDB emulator,
 * dynalite (`openAwsFixture`) or DynamoDB Local (`awsFixture("dynamodb-local")`).
 *
 * - One emulator set per backend per process, shared by the fixtures open at the same time
 *   (`shared-emulators.ts`).
 * - Each fixture gets a fresh table prefix and a fresh bucket, so fixtures never see each other's data.
 * - Tables: `PRESET_TABLES` are created up front; any other spec is created on the first call to one of
 *   its table's methods (the fixture's `table()` wraps the adapter's table). Tests therefore never list
 *   the tables they use, and the adapter itself never creates tables (production tables come from infra).
 */
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import {
  type AwsStorageOptions,
  createAwsStorage,
  ensureBucket,
  ensureTables,
  physicalTableName,
} from "../../lib/storage/aws/index.js";
import { createDynamoClient, createS3Client } from "../../lib/storage/aws/provision.js";
import type { Storage } from "../../lib/storage/storage.js";
import type {
  AddOptions,
  GetOptions,
  Item,
  ItemKey,
  PutOptions,
  QueryOptions,
  Table,
  TableSpec,
} from "../../lib/storage/table.js";
import { type DynamoBackend, EMULATOR_CREDENTIALS, EMULATOR_TIMEOUTS } from "./emulators.js";
import { acquireEmulators } from "./shared-emulators.js";
import type { OpenFixture, StorageFixture } from "./storage-fixture.js";

/** Tables every fixture creates before its first test: the broker's queue index. */
export const PRESET_TABLES: readonly TableSpec[] = [{ name: "queue-index", sortKeyType: "number" }];

let fixtureSeq = 0;

/** Fixtures on s3rver and `backend` as DynamoDB. */
export function awsFixture(backend: DynamoBackend): OpenFixture {
  return () => openOn(backend);
}

/** Fixtures on dynalite and s3rver. */
export const openAwsFixture: OpenFixture = awsFixture("dynalite");

async function openOn(backend: DynamoBackend): Promise<StorageFixture> {
  const { emulators, release: releaseEmulators } = await acquireEmulators(backend);
  fixtureSeq++;
  const options: AwsStorageOptions = {
    region: "us-east-1",
    bucket: `nimbus-${process.pid}-${fixtureSeq}`,
    tablePrefix: `t${fixtureSeq}-`,
    dynamoEndpoint: emulators.dynamoEndpoint,
    s3Endpoint: emulators.s3Endpoint,
    credentials: EMULATOR_CREDENTIALS,
    timeouts: EMULATOR_TIMEOUTS,
    // maxAttempts stays the adapter's default (DynamoDB 6, S3 3), as in production: s3rver can answer a rare 500 when a put
    // races a delete's clean-up of the same folder, and a retry is what S3 clients do anyway.
  };
  try {
    await Promise.all([ensureBucket(options), ensureTables(options, PRESET_TABLES)]);
  } catch (err) {
    await releaseEmulators();
    throw err;
  }
  const tables = new TableCreator(options);
  const opened: Storage[] = [];
  const open = (): Storage => {
    const storage = withLazyTables(createAwsStorage(options), tables);
    opened.push(storage);
    return storage;
  };
  return {
    storage: open(),
    reopen: async () => open(),
    async cleanup() {
      try {
        await Promise.all(opened.map((s) => s.close()));
        await dropData(options, [...PRESET_TABLES.map((s) => s.name), ...tables.created()]);
      } finally {
        await releaseEmulators();
      }
    },
  };
}

/** Creates each table once, on first use, for every storage of one fixture. */
class TableCreator {
  readonly #options: AwsStorageOptions;
  readonly #ready = new Map<string, Promise<void>>();

  constructor(options: AwsStorageOptions) {
    this.#options = options;
  }

  ensure(spec: TableSpec): Promise<void> {
    let ready = this.#ready.get(spec.name);
    if (ready === undefined) {
      ready = PRESET_TABLES.some((s) => s.name === spec.name) ? Promise.resolve() : ensureTables(this.#options, [spec]);
      // A failed creation is retried by the next call rather than remembered.
      ready.catch(() => this.#ready.delete(spec.name));
      this.#ready.set(spec.name, ready);
    }
    return ready;
  }

  created(): string[] {
    return [...this.#ready.keys()].filter((name) => !PRESET_TABLES.some((s) => s.name === name));
  }
}

function withLazyTables(inner: Storage, tables: TableCreator): Storage {
  const wrapped = new Map<string, Table>();
  return {
    objects: inner.objects,
    counter: inner.counter,
    close: () => inner.close(),
    table(spec: TableSpec): Table {
      const table = inner.table(spec);
      let lazy = wrapped.get(spec.name);
      if (lazy === undefined) {
        lazy = lazyTable(table, () => tables.ensure(spec));
        wrapped.set(spec.name, lazy);
      }
      return lazy;
    },
  };
}

/** `table`, with each call waiting until the physical table exists. */
function lazyTable(table: Table, ready: () => Promise<void>): Table {
  return {
    spec: table.spec,
    counter: table.counter,
    async get(key: ItemKey, options?: GetOptions) {
      await ready();
      return table.get(key, options);
    },
    async put(item: Item, options?: PutOptions) {
      await ready();
      return table.put(item, options);
    },
    async add(key: ItemKey, attribute: string, delta: number, options?: AddOptions) {
      await ready();
      return table.add(key, attribute, delta, options);
    },
    async delete(key: ItemKey) {
      await ready();
      return table.delete(key);
    },
    async query(pk: string, options?: QueryOptions) {
      await ready();
      return table.query(pk, options);
    },
  };
}

/** Deletes the fixture's tables and bucket, so a long test process does not keep every fixture's data. */
async function dropData(options: AwsStorageOptions, tableNames: string[]): Promise<void> {
  const dynamo = createDynamoClient(options);
  const s3 = createS3Client(options);
  try {
    await Promise.all(
      tableNames.map((name) =>
        dynamo.send(new DeleteTableCommand({ TableName: physicalTableName(options, name) })).catch(() => undefined),
      ),
    );
    for (;;) {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: options.bucket }));
      const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key }));
      if (keys.length === 0) break;
      await s3.send(new DeleteObjectsCommand({ Bucket: options.bucket, Delete: { Objects: keys, Quiet: true } }));
    }
    await s3.send(new DeleteBucketCommand({ Bucket: options.bucket }));
  } finally {
    dynamo.destroy();
    s3.destroy();
  }
}
