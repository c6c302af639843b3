/**
 * @module The `Table` port on SQLite: one SQL table per `TableSpec`, rows `(pk, sk, attrs, bin, bref)` under a
 * `(pk, sk)` primary key WITHOUT ROWID, so a partition reads in sort-key order straight off the index.
 * Number sort keys are REAL (numeric order); string sort keys are TEXT under SQLite's BINARY collation,
 * which compares UTF-8 bytes as DynamoDB does. A put runs in one `BEGIN IMMEDIATE` transaction (read,
 * check the condition, write), so processes sharing the database file never interleave.
 *
 * A row's bytes (its binary attributes, item-codec.ts) of `OUT_OF_ROW_BYTES` or more live in the table's blob table
 * (`"b_<name>"`, rows in insertion order) and the row holds their id (`bref`); shorter ones stay in the row (`bin`).
 * Why: the rows of a queue's index sit between other queues' rows, so a new item lands inside the tree, and a leaf
 * of 1 KiB items fills every few inserts, then is rebalanced with its siblings: three or four pages into the WAL per
 * append. A row without its bytes is about 100 bytes, and the blob table only grows at its end (docs/queue-log.md,
 * "On the embedded store"). A blob is written just before the row that names it; the statement that deletes a row or
 * makes it name another deletes its old blob too (triggers, sqlite-table-schema.ts). A write that places a blob is
 * therefore two statements, and runs in a savepoint when it shares its transaction (write-batcher.ts).
 */
import type { Database, Statement } from "better-sqlite3";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { itemSize } from "../item-size.js";
import type { RequestCounter } from "../request-counter.js";
import {
  type AddOptions,
  type AddThenPut,
  type AddThenPutOutcome,
  ConditionFailedError,
  type GetOptions,
  type Item,
  type ItemKey,
  meetsCondition,
  type PutOptions,
  type QueryOptions,
  type QueryPage,
  type SortKey,
  type Table,
  type TableSpec,
} from "../table.js";
import { checkAdd, checkCondition, checkItem, checkKey, checkQuery, checkTableSpec } from "../validate.js";
import { decodeItem, encodeAttributes, type StoredAttributes, storedName } from "./item-codec.js";
import { sqlite } from "./sqlite-errors.js";
import { openTableSchema, sqlNamesOf } from "./sqlite-table-schema.js";
import { type WriteBatcher, writeBatcherOf } from "./write-batcher.js";

/** A row's bytes this long or longer go to the table's blob table (see the module's comment). */
export const OUT_OF_ROW_BYTES = 512;

/** DynamoDB ends a query page once it has read 1 MB. */
const PAGE_BYTES = 1024 * 1024;

/** A row as `#read` selects it: its bytes from wherever they are, and the id of its blob (null: none). */
interface Row {
  sk: SortKey;
  attrs: string;
  bytes: Buffer | null;
  bref: number | null;
}

/** A row of a query (`querySql`) from a statement in raw mode. */
type RawRow = [sk: SortKey, attrs: string, bytes: Buffer | null];

/** Whether a row keeps `bytes` in a blob. */
const outOfRow = (bytes: Buffer | null): bytes is Buffer => bytes !== null && bytes.length >= OUT_OF_ROW_BYTES;

const sameBytes = (a: Buffer | null, b: Buffer | null): boolean =>
  a === null ? b === null : b !== null && a.equals(b);

/** A row's columns as read: its bytes, from the row or from its blob. */
const ROW_COLUMNS = "r.sk, r.attrs, coalesce(r.bin, b.bytes) AS bytes";

export class SqliteTable implements Table {
  readonly spec: TableSpec;
  readonly counter: RequestCounter;
  readonly #db: Database;
  readonly #name: string;
  /** The table holding the rows' large bytes, and the two joined as `r` and `b` for reads. */
  readonly #blobs: string;
  readonly #joined: string;
  readonly #statements = new Map<string, Statement>();
  readonly #rawStatements = new Map<string, Statement>();
  /** Puts arriving together share one transaction (group commit, write-batcher.ts). */
  readonly #writes: WriteBatcher;

  constructor(db: Database, spec: TableSpec, counter: RequestCounter) {
    checkTableSpec(spec); // the name goes into SQL, quoted: it must be plain
    this.#db = db;
    this.spec = { ...spec };
    this.counter = counter;
    this.#writes = writeBatcherOf(db);
    const names = sqlNamesOf(spec);
    this.#name = names.rows;
    this.#blobs = names.blobs;
    this.#joined = `${this.#name} AS r LEFT JOIN ${this.#blobs} AS b ON b.id = r.bref`;
    sqlite(`open table ${spec.name}`, () => openTableSchema(db, spec));
  }

  /** The group commit this table's puts go through (shared by every table of the database). */
  get writeBatcher(): WriteBatcher {
    return this.#writes;
  }

  async get(key: ItemKey, options: GetOptions = {}): Promise<Item | undefined> {
    checkKey(this.spec, key);
    const item = sqlite("get", () => this.#read(key));
    this.counter.tableRead(item ? itemSize(item) : 0, options.consistent === true);
    return item;
  }

  /**
   * The put takes the write lock before it reads (`BEGIN IMMEDIATE`), so `{ exists: false }` is checked
   * against the item as it is when the put lands, whichever process writes. Puts arriving in one turn of
   * the event loop share that transaction (group commit); each checks its own condition in it, in arrival
   * order, and is answered after the commit. A failed condition is counted as the write DynamoDB bills for it.
   */
  async put(item: Item, options: PutOptions = {}): Promise<void> {
    const size = checkItem(this.spec, item);
    checkCondition(options.condition);
    const condition = options.condition;
    const attributes = encodeAttributes(item);
    const stored = await this.#writes.submit(
      () =>
        sqlite("put", () => {
          if (condition !== undefined && "exists" in condition) {
            // Absent-only: one statement that inserts or does nothing (after its blob's, if any); the item in the way is
            // read only if asked.
            if (this.#insertNew(item, attributes)) return { met: true, found: undefined };
            return { met: false, found: options.returnExistingOnFailure ? this.#read(item) : undefined };
          }
          const found = condition === undefined ? undefined : this.#read(item);
          const met = condition === undefined || meetsCondition(condition, found);
          if (met) this.#upsert(item, attributes);
          return { met, found };
        }),
      !outOfRow(attributes.bytes),
    );
    this.counter.tableWrite(size);
    if (!stored.met) {
      throw new ConditionFailedError(
        `put ${this.spec.name} ${item.pk}/${item.sk}: condition failed`,
        options.returnExistingOnFailure ? stored.found : undefined,
      );
    }
  }

  /**
   * Read, add, write inside the shared `BEGIN IMMEDIATE` transaction: no other writer of any process
   * can come between the read and the write, so concurrent adds never lose one another (as DynamoDB's
   * `ADD`). `{ exists: true }` is checked against the item as it is then; a failed condition writes nothing
   * and is counted as the write DynamoDB bills for it.
   */
  async add(key: ItemKey, attribute: string, delta: number, options: AddOptions = {}): Promise<number> {
    checkAdd(this.spec, key, attribute, delta, options);
    const outcome = await this.#writes.submit(
      () =>
        sqlite("add", () => {
          const row = this.#readRow(key);
          const found = row === undefined ? undefined : this.#decode(key.pk, row);
          if (found === undefined && options.condition?.exists === true) return undefined;
          const old = found?.[attribute] ?? 0;
          if (typeof old !== "number") {
            throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `add: attribute ${attribute} is not a number`);
          }
          const item: Item = { ...(found ?? key), [attribute]: old + delta };
          this.#upsert(item, encodeAttributes(item), row);
          return item;
        }),
      true,
    );
    if (outcome === undefined) {
      this.counter.tableWrite(0);
      throw new ConditionFailedError(`add ${this.spec.name} ${key.pk}/${key.sk}: condition failed`);
    }
    this.counter.tableWrite(itemSize(outcome));
    return outcome[attribute] as number;
  }

  /**
   * The add and the put in one job of the shared transaction, so one commit: the put's item is built from the
   * add's result inside it, after the write lock was taken. A put whose key is taken leaves the add in place (as
   * the two calls would); an item that fails validation throws, and the job's savepoint rolls both back.
   */
  async addThenPut(write: AddThenPut): Promise<AddThenPutOutcome> {
    const { counter, attribute, delta } = write;
    checkAdd(this.spec, counter, attribute, delta, { condition: { exists: true } });
    const done = await this.#writes.submit(() =>
      sqlite("addThenPut", () => {
        const row = this.#readRow(counter);
        if (row === undefined) return undefined;
        const found = this.#decode(counter.pk, row);
        const old = found[attribute] ?? 0;
        if (typeof old !== "number") {
          throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `add: attribute ${attribute} is not a number`);
        }
        const counterItem: Item = { ...found, [attribute]: old + delta };
        this.#upsert(counterItem, encodeAttributes(counterItem), row);
        const item = write.item(old + delta);
        const size = checkItem(this.spec, item);
        const existing = this.#insertNew(item, encodeAttributes(item)) ? undefined : this.#read(item);
        return { added: old + delta, counterSize: itemSize(counterItem), size, existing };
      }),
    );
    if (done === undefined) {
      this.counter.tableWrite(0);
      return { outcome: "noCounter" };
    }
    this.counter.tableWrite(done.counterSize);
    this.counter.tableWrite(done.size);
    const { added, existing } = done;
    return existing === undefined ? { outcome: "stored", added } : { outcome: "taken", added, existing };
  }

  /** Through the group commit too, so a put and a delete issued in one turn apply in the order issued. */
  async delete(key: ItemKey): Promise<void> {
    checkKey(this.spec, key);
    await this.#writes.submit(
      // One statement: its row's blob goes with it (the trigger).
      () => sqlite("delete", () => this.#stmt(`DELETE FROM ${this.#name} WHERE pk = ? AND sk = ?`).run(key.pk, key.sk)),
      true,
    );
    this.counter.tableWrite(0);
  }

  async query(pk: string, options: QueryOptions = {}): Promise<QueryPage> {
    checkQuery(this.spec, pk, options);
    const { sql, params } = querySql(this.#joined, pk, options);
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const items: Item[] = [];
    let bytes = 0;
    sqlite("query", () => {
      // Rows as arrays (sk, attrs, bytes), not objects: no property set per column.
      // Rows come a step at a time: leaving the loop stops the statement, so the page is the query's limit.
      for (const [sk, attrs, rowBytes] of this.#rawStmt(sql).iterate(...params) as IterableIterator<RawRow>) {
        const item = decodeItem(pk, sk, attrs, rowBytes);
        items.push(item);
        bytes += itemSize(item);
        // As DynamoDB: the page ends once it is full or has read 1 MB.
        if (items.length >= limit || bytes >= PAGE_BYTES) break;
      }
    });
    this.counter.tableRead(bytes, options.consistent === true);
    const last = items[items.length - 1];
    const cut = items.length >= limit || bytes >= PAGE_BYTES;
    return cut && last ? { items, lastSk: last.sk } : { items };
  }

  /**
   * Writes `item` (its attributes as stored: `attributes`) over whatever row has its key; the row's old blob, if it
   * names another now, goes in the same statement (the trigger). `read`: the row as this transaction read it: when
   * its bytes are the new ones (an add changes a number), they stay where they are, so no blob is written.
   */
  #upsert(item: Item, attributes: StoredAttributes, read?: Row): void {
    const kept = read !== undefined && sameBytes(read.bytes, attributes.bytes);
    const { bin, bref } = kept
      ? { bin: read.bref === null ? read.bytes : null, bref: read.bref }
      : this.#placeBytes(attributes.bytes);
    const sql =
      `INSERT INTO ${this.#name} (pk, sk, attrs, bin, bref) VALUES (?, ?, ?, ?, ?)` +
      " ON CONFLICT (pk, sk) DO UPDATE SET attrs = excluded.attrs, bin = excluded.bin, bref = excluded.bref";
    this.#stmt(sql).run(item.pk, item.sk, attributes.json, bin, bref);
  }

  /**
   * Inserts `item` (its attributes as stored: `attributes`) unless its key is taken; whether it did. With bytes in a
   * blob, a taken key costs the blob's write and its delete.
   */
  #insertNew(item: Item, attributes: StoredAttributes): boolean {
    const { bin, bref } = this.#placeBytes(attributes.bytes);
    const sql = `INSERT INTO ${this.#name} (pk, sk, attrs, bin, bref) VALUES (?, ?, ?, ?, ?) ON CONFLICT (pk, sk) DO NOTHING`;
    const inserted = this.#stmt(sql).run(item.pk, item.sk, attributes.json, bin, bref).changes === 1;
    if (!inserted && bref !== null) this.#stmt(`DELETE FROM ${this.#blobs} WHERE id = ?`).run(bref);
    return inserted;
  }

  /** Where a row keeps `bytes`: in itself when short, else in a new blob, written here, before the row names it. */
  #placeBytes(bytes: Buffer | null): { bin: Buffer | null; bref: number | null } {
    if (!outOfRow(bytes)) return { bin: bytes, bref: null };
    const id = this.#stmt(`INSERT INTO ${this.#blobs} (bytes) VALUES (?)`).run(bytes).lastInsertRowid;
    return { bin: null, bref: Number(id) };
  }

  #readRow(key: ItemKey): Row | undefined {
    const sql = `SELECT ${ROW_COLUMNS}, r.bref FROM ${this.#joined} WHERE r.pk = ? AND r.sk = ?`;
    return this.#stmt(sql).get(key.pk, key.sk) as Row | undefined;
  }

  #decode(pk: string, row: Row): Item {
    return decodeItem(pk, row.sk, row.attrs, row.bytes);
  }

  #read(key: ItemKey): Item | undefined {
    const row = this.#readRow(key);
    return row ? this.#decode(key.pk, row) : undefined;
  }

  /** The statement of `sql` in raw mode (rows as arrays), kept apart from `#stmt`'s (a statement's mode is its own). */
  #rawStmt(sql: string): Statement {
    let statement = this.#rawStatements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql).raw(true);
      this.#rawStatements.set(sql, statement);
    }
    return statement;
  }

  #stmt(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** The object keys this table's items own (`spec.ownedObjects`), from one read of the table. */
  ownedObjectKeys(): Set<string> {
    const attribute = this.spec.ownedObjects?.attribute;
    if (attribute === undefined) return new Set();
    // checkTableSpec allows only [A-Za-z0-9_] in the name: it needs no quoting inside the JSON path.
    const path = `$."${storedName(attribute)}"`;
    return sqlite("read owned object keys", () => {
      const rows = this.#db
        .prepare(`SELECT json_extract(attrs, ?) AS k FROM ${this.#name} WHERE json_type(attrs, ?) = 'text'`)
        .pluck()
        .all(path, path) as string[];
      return new Set(rows);
    });
  }
}

/**
 * The SQL of a query of `pk` on `joined` (a table of rows joined as `r` with its blobs as `b`) and its parameters.
 * Its plan is a search of the primary key in its order, no sort (test/contract/local.test.ts asks SQLite).
 */
export function querySql(joined: string, pk: string, options: QueryOptions): { sql: string; params: SortKey[] } {
  const where = ["r.pk = ?"];
  const params: SortKey[] = [pk];
  const bound = (op: string, value: SortKey) => {
    where.push(`r.sk ${op} ?`);
    params.push(value);
  };
  const range = options.sk;
  if (range) {
    if ("between" in range) {
      bound(">=", range.between[0]);
      bound("<=", range.between[1]);
    } else if ("lte" in range) bound("<=", range.lte);
    else bound(">", range.gt);
  }
  if (options.startAfter !== undefined) bound(options.descending ? "<" : ">", options.startAfter);
  const order = options.descending ? "DESC" : "ASC";
  // No LIMIT: `query` stops reading once its page is full (the primary key's order needs no sort, so rows come
  // one step at a time). A bound LIMIT would make SQLite (3.47 on) compile the statement again at every run, as
  // its value may change the plan: about 20 µs a query; a literal one would need a statement per page size.
  return {
    sql: `SELECT ${ROW_COLUMNS} FROM ${joined} WHERE ${where.join(" AND ")} ORDER BY r.sk ${order}`,
    params,
  };
}
