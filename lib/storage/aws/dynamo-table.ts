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
import { itemSize } from "../item-size.js";
import type { RequestCounter } from "../request-counter.js";
import {
  ConditionFailedError,
  type GetOptions,
  type Item,
  type ItemKey,
  type QueryOptions,
  type QueryPage,
  type Table,
  type TableSpec,
  type UpdateSpec,
  type WriteOptions,
} from "../table.js";
import { checkCondition, checkItem, checkItemSize, checkKey, checkQuery, checkUpdate } from "../validate.js";
import {
  conditionExpression,
  fromItem,
  fromSortKey,
  keyConditionExpression,
  Placeholders,
  toAttrMap,
  toKey,
  updateExpression,
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

  async put(item: Item, options: WriteOptions = {}): Promise<void> {
    checkItem(this.spec, item);
    checkCondition(options.condition);
    const ph = new Placeholders();
    const condition = options.condition === undefined ? undefined : conditionExpression(options.condition, ph);
    const size = itemSize(item);
    await this.#write(
      "PutItem",
      item,
      options,
      () => this.counter.tableWrite(size),
      async () => {
        await this.#client.send(
          new PutItemCommand({
            TableName: this.#tableName,
            Item: toAttrMap(item),
            ...(condition === undefined ? {} : { ConditionExpression: condition, ...ph.fields() }),
            ...returnOnFailure(options),
          }),
        );
        this.counter.tableWrite(size);
      },
    );
  }

  async update(key: ItemKey, update: UpdateSpec, options: WriteOptions = {}): Promise<Item> {
    checkKey(this.spec, key);
    checkUpdate(update);
    checkUpdateSize(key, update);
    checkCondition(options.condition);
    const ph = new Placeholders();
    const expression = updateExpression(update, ph);
    const condition = options.condition === undefined ? undefined : conditionExpression(options.condition, ph);
    let stored: Item | undefined;
    await this.#write(
      "UpdateItem",
      key,
      options,
      () => this.counter.tableWrite(0),
      async () => {
        const out = await this.#client.send(
          new UpdateItemCommand({
            TableName: this.#tableName,
            Key: toKey(key),
            ...(expression === undefined ? {} : { UpdateExpression: expression }),
            ...(condition === undefined ? {} : { ConditionExpression: condition }),
            ...ph.fields(),
            ReturnValues: "ALL_NEW",
            ...returnOnFailure(options),
          }),
        );
        // ALL_NEW always holds at least the key: an update creates the item when it is missing.
        stored = fromItem(out.Attributes ?? toKey(key));
        this.counter.tableWrite(itemSize(stored));
      },
    );
    return stored as Item;
  }

  async delete(key: ItemKey, options: WriteOptions = {}): Promise<void> {
    checkKey(this.spec, key);
    checkCondition(options.condition);
    const ph = new Placeholders();
    const condition = options.condition === undefined ? undefined : conditionExpression(options.condition, ph);
    await this.#write(
      "DeleteItem",
      key,
      options,
      () => this.counter.tableWrite(0),
      async () => {
        await this.#client.send(
          new DeleteItemCommand({
            TableName: this.#tableName,
            Key: toKey(key),
            ...(condition === undefined ? {} : { ConditionExpression: condition, ...ph.fields() }),
            ...returnOnFailure(options),
          }),
        );
        this.counter.tableWrite(0);
      },
    );
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
   * Runs one conditional write. A failed condition is billed as a write (`countFailed`) and becomes a
   * `ConditionFailedError`; with `returnExistingOnFailure` it carries the stored item: the one DynamoDB
   * returned, or, where the backend returns none (dynalite), the one a consistent GetItem reads.
   */
  async #write(
    op: string,
    key: ItemKey,
    options: WriteOptions,
    countFailed: () => void,
    send: () => Promise<void>,
  ): Promise<void> {
    try {
      await send();
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw translateError(err, this.#what(op));
      countFailed();
      let existing: Item | undefined;
      if (options.returnExistingOnFailure === true) {
        const returned = conditionFailedItem(err);
        existing =
          returned === undefined
            ? await this.#getItem({ pk: key.pk, sk: key.sk }, true, "GetItem after a failed condition")
            : fromItem(returned);
      }
      throw new ConditionFailedError(`${this.#what(op)}: the condition failed`, existing, { cause: err });
    }
  }

  #what(op: string): string {
    return `${op} on table "${this.#tableName}"`;
  }
}

function returnOnFailure(options: WriteOptions): { ReturnValuesOnConditionCheckFailure?: "ALL_OLD" } {
  return options.returnExistingOnFailure === true && options.condition !== undefined
    ? { ReturnValuesOnConditionCheckFailure: "ALL_OLD" }
    : {};
}

/** The stored item holds at least the key and the set attributes: already too large is known without a read. */
function checkUpdateSize(key: ItemKey, update: UpdateSpec): void {
  checkItemSize({ ...update.set, pk: key.pk, sk: key.sk });
}
