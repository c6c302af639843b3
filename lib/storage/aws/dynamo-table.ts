/**
 * @module `Table` on DynamoDB: one physical table per spec, `pk` (S) as partition key and `sk` (S or N)
 * as sort key. Requests are validated first the way the embedded adapter validates them, so bad input
 * fails the same way everywhere and nothing is sent; every request sent is counted as DynamoDB bills it.
 */
import {
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { itemSize } from "../item-size.js";
import type { RequestCounter } from "../request-counter.js";
import {
  type AddOptions,
  ConditionFailedError,
  type GetOptions,
  type Item,
  type ItemKey,
  type PutOptions,
  type QueryOptions,
  type QueryPage,
  type Table,
  type TableSpec,
} from "../table.js";
import { checkAdd, checkCondition, checkItem, checkKey, checkQuery } from "../validate.js";
import {
  conditionExpression,
  existsCondition,
  fromAttr as fromAttrValue,
  fromItem,
  fromSortKey,
  keyConditionExpression,
  Placeholders,
  toAttrMap,
  toKey,
} from "./marshal.js";
import { conditionFailedItem, isConditionalCheckFailed, translateError } from "./sdk-errors.js";

export class DynamoTable implements Table {
  readonly spec: TableSpec;
  readonly counter: RequestCounter;
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(client: DynamoDBClient, tableName: string, spec: TableSpec, counter: RequestCounter) {
    this.#client = client;
    this.#tableName = tableName;
    this.spec = spec;
    this.counter = counter;
  }

  async get(key: ItemKey, options: GetOptions = {}): Promise<Item | undefined> {
    checkKey(this.spec, key);
    return this.#getItem(key, options.consistent === true, "GetItem");
  }

  async put(item: Item, options: PutOptions = {}): Promise<void> {
    checkItem(this.spec, item);
    checkCondition(options.condition);
    const ph = new Placeholders();
    const conditional = options.condition !== undefined;
    const returnExisting = conditional && options.returnExistingOnFailure === true;
    const size = itemSize(item);
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: toAttrMap(item),
          // `attribute_not_exists(pk)` ({ exists: false }): the put creates, never overwrites; of concurrent
          // creates under one key at most one succeeds. It fails only when an item is stored under the key.
          // `{ versionIs: n }`: the item is stored with `version` n (absent counts as 0), so a read-modify-write
          // lands only on the version it read; of concurrent updates from one version at most one succeeds.
          // `{ absentOrUntilBefore: t }`: no item, or its `until` < t: a live marker is never taken over, and of
          // concurrent claims after it ran out at most one succeeds.
          ...(options.condition !== undefined
            ? { ConditionExpression: conditionExpression(options.condition, ph), ...ph.fields() }
            : {}),
          ...(returnExisting ? { ReturnValuesOnConditionCheckFailure: "ALL_OLD" } : {}),
        }),
      );
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw translateError(err, this.#what("PutItem"));
      // DynamoDB bills a failed conditional put as the write it would have been.
      this.counter.tableWrite(size);
      throw new ConditionFailedError(
        `${this.#what("PutItem")}: the condition failed`,
        returnExisting ? await this.#existingAfterFailure(item, err) : undefined,
        { cause: err },
      );
    }
    this.counter.tableWrite(size);
  }

  async add(key: ItemKey, attribute: string, delta: number, options: AddOptions = {}): Promise<number> {
    checkAdd(this.spec, key, attribute, delta, options);
    const ph = new Placeholders();
    const name = ph.name(attribute);
    const expression = `ADD ${name} ${ph.value(delta)}`;
    // `attribute_exists(pk)` ({ exists: true }): only an item created on purpose is changed, never created here.
    const condition = options.condition === undefined ? {} : { ConditionExpression: existsCondition(ph) };
    // Billed on the item's size; an add's item is its key and a few numbers (the counter items of the queue log).
    const size = itemSize({ pk: key.pk, sk: key.sk, [attribute]: delta });
    let value: unknown;
    try {
      const out = await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: toKey(key),
          UpdateExpression: expression,
          ...condition,
          ...ph.fields(),
          ReturnValues: "UPDATED_NEW",
        }),
      );
      const returned = out.Attributes?.[attribute];
      value = returned === undefined ? undefined : fromAttrValue(returned);
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw translateError(err, this.#what("UpdateItem"));
      this.counter.tableWrite(size);
      throw new ConditionFailedError(`${this.#what("UpdateItem")}: the condition failed`, undefined, { cause: err });
    }
    this.counter.tableWrite(size);
    if (typeof value !== "number") {
      throw new NimbusError(
        ErrorCode.SYSTEM_ERROR,
        `${this.#what("UpdateItem")}: no new value of ${attribute} returned`,
      );
    }
    return value;
  }

  async delete(key: ItemKey): Promise<void> {
    checkKey(this.spec, key);
    try {
      await this.#client.send(new DeleteItemCommand({ TableName: this.#tableName, Key: toKey(key) }));
    } catch (err) {
      throw translateError(err, this.#what("DeleteItem"));
    }
    this.counter.tableWrite(0);
  }

  async query(pk: string, options: QueryOptions = {}): Promise<QueryPage> {
    checkQuery(this.spec, pk, options);
    const ph = new Placeholders();
    const keyCondition = keyConditionExpression(pk, options.sk, ph);
    const consistent = options.consistent === true;
    let out: QueryCommandOutput;
    try {
      out = await this.#client.send(
        new QueryCommand({
          TableName: this.#tableName,
          KeyConditionExpression: keyCondition,
          ...ph.fields(),
          ScanIndexForward: options.descending !== true,
          ConsistentRead: consistent,
          ...(options.limit === undefined ? {} : { Limit: options.limit }),
          ...(options.startAfter === undefined ? {} : { ExclusiveStartKey: toKey({ pk, sk: options.startAfter }) }),
        }),
      );
    } catch (err) {
      throw translateError(err, this.#what("Query"));
    }
    const items = (out.Items ?? []).map(fromItem);
    this.counter.tableRead(
      items.reduce((sum, item) => sum + itemSize(item), 0),
      consistent,
    );
    const lastSk = out.LastEvaluatedKey === undefined ? undefined : fromSortKey(out.LastEvaluatedKey);
    return lastSk === undefined ? { items } : { items, lastSk };
  }

  /** One GetItem, counted as a read of what it found. */
  async #getItem(key: ItemKey, consistent: boolean, op: string): Promise<Item | undefined> {
    let found: Item | undefined;
    try {
      const out = await this.#client.send(
        new GetItemCommand({ TableName: this.#tableName, Key: toKey(key), ConsistentRead: consistent }),
      );
      found = out.Item === undefined ? undefined : fromItem(out.Item);
    } catch (err) {
      throw translateError(err, this.#what(op));
    }
    this.counter.tableRead(found === undefined ? 0 : itemSize(found), consistent);
    return found;
  }

  /**
   * The item stored under the key of a put whose condition failed: the one DynamoDB returned, or, where
   * the backend returns none (dynalite), the one a consistent GetItem reads. The only condition,
   * `attribute_not_exists(pk)`, fails only when an item exists, and DynamoDB then always returns it, so
   * on DynamoDB (and DynamoDB Local) this never reads; an absent item cannot fail the condition at all.
   */
  async #existingAfterFailure(key: ItemKey, err: unknown): Promise<Item | undefined> {
    const returned = conditionFailedItem(err);
    if (returned !== undefined) return fromItem(returned);
    return this.#getItem({ pk: key.pk, sk: key.sk }, true, "GetItem after a failed condition");
  }

  #what(op: string): string {
    return `${op} on table "${this.#tableName}"`;
  }
}
