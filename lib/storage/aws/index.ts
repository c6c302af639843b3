/**
 * @module The AWS storage adapter: `Table` on DynamoDB and `ObjectStore` on S3, behind the same ports as
 * the embedded adapter. One S3 client and one DynamoDB client per region per storage, reused by every table
 * (a table in another region, `tableRegions`, gets that region's client).
 *
 * @example
 * const storage = createAwsStorage({ region: "us-east-1", bucket: "nimbus-data", tablePrefix: "nimbus-prod-" });
 * const routes = storage.table({ name: "routes", sortKeyType: "string" }); // table "nimbus-prod-routes"
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { RequestCounter } from "../request-counter.js";
import type { Storage } from "../storage.js";
import type { Table, TableSpec } from "../table.js";
import { DynamoTable } from "./dynamo-table.js";
import { type AwsStorageOptions, createDynamoClient, createS3Client, physicalTableName } from "./provision.js";
import { S3ObjectStore } from "./s3-object-store.js";

export { DynamoTable } from "./dynamo-table.js";
export {
  type AwsStorageOptions,
  DEFAULT_AWS_TIMEOUTS,
  ensureBucket,
  ensureTables,
  physicalTableName,
} from "./provision.js";
export { DEFAULT_DYNAMO_ATTEMPTS, DEFAULT_RETRY_BACKOFF, type RetryBackoff } from "./retry.js";
export { S3ObjectStore } from "./s3-object-store.js";

/** A `Storage` on DynamoDB and S3. The tables and the bucket must exist (see `ensureTables`). */
export function createAwsStorage(options: AwsStorageOptions): Storage {
  return new AwsStorage(options);
}

class AwsStorage implements Storage {
  readonly counter = new RequestCounter();
  readonly objects: S3ObjectStore;
  readonly #options: AwsStorageOptions;
  readonly #dynamo = new Map<string, DynamoDBClient>();
  readonly #s3: S3Client;
  readonly #tables = new Map<string, DynamoTable>();

  constructor(options: AwsStorageOptions) {
    this.#options = options;
    this.#s3 = createS3Client(options);
    const hedgePuts = options.hedgeObjectPuts ?? options.s3Endpoint === undefined;
    this.objects = new S3ObjectStore(this.#s3, options.bucket, this.counter, hedgePuts);
  }

  table(spec: TableSpec): Table {
    const known = this.#tables.get(spec.name);
    if (known !== undefined) {
      // One logical name is one physical table with one key schema: a second spec for it is a bug.
      if (known.spec.sortKeyType !== spec.sortKeyType) {
        throw new NimbusError(
          ErrorCode.PARAMETER_ILLEGAL,
          `table "${spec.name}" is already open with another sort key type`,
        );
      }
      return known;
    }
    const region = this.#options.tableRegions?.[spec.name] ?? this.#options.region;
    let client = this.#dynamo.get(region);
    if (client === undefined) {
      client = createDynamoClient(this.#options, region);
      this.#dynamo.set(region, client);
    }
    const table = new DynamoTable(client, physicalTableName(this.#options, spec.name), spec, this.counter);
    this.#tables.set(spec.name, table);
    return table;
  }

  async close(): Promise<void> {
    for (const client of this.#dynamo.values()) client.destroy();
    this.#s3.destroy();
  }
}
