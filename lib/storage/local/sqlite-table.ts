/**
 * @module The `Table` port on SQLite: one SQL table per `TableSpec`, rows `(pk, sk, attrs, bin)` under a
 * `(pk, sk)` primary key WITHOUT ROWID, so a partition reads in sort-key order straight off the index.
 * Number sort keys are REAL (numeric order); string sort keys are TEXT under SQLite's BINARY collation,
 * which compares UTF-8 bytes as DynamoDB does. A put runs in one `BEGIN IMMEDIATE` transaction (read,
 * check the condition, write), so processes sharing the database file never interleave.
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
import { decodeItem, encodeAttributes, storedName } from "./item-codec.js";
import { retryWhileBusy, sqlite } from "./sqlite-errors.js";
import { type WriteBatcher, writeBatcherOf } from "./write-batcher.js";

/** DynamoDB ends a query page once it has read 1 MB. */
const PAGE_BYTES = 1024 * 1024;
/** DynamoDB TTL ignores expiry times more than five years in the past. */
const TTL_HORIZON_SECONDS = 5 * 365 * 24 * 3600;
/** Expired items are swept when a table opens, this long after they expire (TTL is lazy anyway). */
const TTL_GRACE_SECONDS = 3600;

interface Row {
  sk: SortKey;
  attrs: string;
  bin: Buffer | null;
}

/** A row of `SELECT sk, attrs, bin` from a statement in raw mode. */
type RawRow = [sk: SortKey, attrs: string, bin: Buffer | null];

export class SqliteTable implements Table {
  readonly spec: TableSpec;
  readonly counter: RequestCounter;
  readonly #db: Database;
  readonly #name: string;
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
    this.#name = `"t_${spec.name}"`;
    const skType = spec.sortKeyType === "number" ? "REAL" : "TEXT";
    sqlite(`open table ${spec.name}`, () => {
      const busyTimeoutMs = Number(db.pragma("busy_timeout", { simple: true }));
      retryWhileBusy(
        () =>
          db.exec(
            `CREATE TABLE IF NOT EXISTS ${this.#name} (pk TEXT NOT NULL, sk ${skType} NOT NULL, attrs TEXT NOT NULL,` +
              " bin BLOB, PRIMARY KEY (pk, sk)) WITHOUT ROWID",
          ),
        busyTimeoutMs,
      );
      const columns = this.#addBytesColumn(busyTimeoutMs);
      const declared = columns.find((c) => c.name === "sk")?.type;
      if (declared !== skType) {
        throw new NimbusError(
          ErrorCode.PARAMETER_ILLEGAL,
          `table ${spec.name} exists with another sort key type (${declared}, asked ${skType})`,
        );
      }
      this.#sweepExpired();
    });
  }

  /**
   * The table's columns, with `bin` (the bytes of binary attributes, item-codec.ts) added to a table created before
   * it existed: its rows keep their base64 attributes, read as before. Another process may add it at the same
   * moment: a duplicate column is then simply there.
   */
  #addBytesColumn(busyTimeoutMs: number): { name: string; type: string }[] {
    const columns = () =>
      this.#db.prepare(`PRAGMA table_info(${this.#name})`).all() as { name: string; type: string }[];
    const found = columns();
    if (found.some((c) => c.name === "bin")) return found;
    try {
      retryWhileBusy(() => this.#db.exec(`ALTER TABLE ${this.#name} ADD COLUMN bin BLOB`), busyTimeoutMs);
    } catch (err) {
      if (!/duplicate column/i.test(String((err as Error).message))) throw err;
    }
    return columns();
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
    const stored = await this.#writes.submit(
      () =>
        sqlite("put", () => {
          if (condition !== undefined && "exists" in condition) {
            // Absent-only: one statement that inserts or does nothing; the item in the way is read only if asked.
            if (this.#insertNew(item)) return { met: true, found: undefined };
            return { met: false, found: options.returnExistingOnFailure ? this.#read(item) : undefined };
          }
          const found = condition === undefined ? undefined : this.#read(item);
          const met = condition === undefined || meetsCondition(condition, found);
          if (met) this.#upsert(item);
          return { met, found };
        }),
      true,
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
          const found = this.#read(key);
          if (found === undefined && options.condition?.exists === true) return undefined;
          const old = found?.[attribute] ?? 0;
          if (typeof old !== "number") {
            throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `add: attribute ${attribute} is not a number`);
          }
          const item: Item = { ...(found ?? key), [attribute]: old + delta };
          this.#upsert(item);
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
        const found = this.#read(counter);
        if (found === undefined) return undefined;
        const old = found[attribute] ?? 0;
        if (typeof old !== "number") {
          throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `add: attribute ${attribute} is not a number`);
        }
        const counterItem: Item = { ...found, [attribute]: old + delta };
        this.#upsert(counterItem);
        const item = write.item(old + delta);
        const size = checkItem(this.spec, item);
        const existing = this.#insertNew(item) ? undefined : this.#read(item);
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
      () => sqlite("delete", () => this.#stmt(`DELETE FROM ${this.#name} WHERE pk = ? AND sk = ?`).run(key.pk, key.sk)),
      true,
    );
    this.counter.tableWrite(0);
  }

  async query(pk: string, options: QueryOptions = {}): Promise<QueryPage> {
    checkQuery(this.spec, pk, options);
    const { sql, params } = this.#querySql(pk, options);
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const items: Item[] = [];
    let bytes = 0;
    sqlite("query", () => {
      // Rows as arrays (sk, attrs, bin), not objects: no property set per column.
      for (const [sk, attrs, bin] of this.#rawStmt(sql).iterate(...params) as IterableIterator<RawRow>) {
        // As DynamoDB: stop before the next item once the page is full or has read 1 MB.
        if (items.length >= limit || bytes >= PAGE_BYTES) break;
        const item = decodeItem(pk, sk, attrs, bin);
        items.push(item);
        bytes += itemSize(item);
      }
    });
    this.counter.tableRead(bytes, options.consistent === true);
    const last = items[items.length - 1];
    const cut = items.length >= limit || bytes >= PAGE_BYTES;
    return cut && last ? { items, lastSk: last.sk } : { items };
  }

  #upsert(item: Item): void {
    const stored = encodeAttributes(item);
    this.#stmt(`INSERT OR REPLACE INTO ${this.#name} (pk, sk, attrs, bin) VALUES (?, ?, ?, ?)`).run(
      item.pk,
      item.sk,
      stored.json,
      stored.bytes,
    );
  }

  /** Inserts `item` unless its key is taken; whether it did. */
  #insertNew(item: Item): boolean {
    const sql = `INSERT INTO ${this.#name} (pk, sk, attrs, bin) VALUES (?, ?, ?, ?) ON CONFLICT (pk, sk) DO NOTHING`;
    const stored = encodeAttributes(item);
    return this.#stmt(sql).run(item.pk, item.sk, stored.json, stored.bytes).changes === 1;
  }

  #read(key: ItemKey): Item | undefined {
    const row = this.#stmt(`SELECT sk, attrs, bin FROM ${this.#name} WHERE pk = ? AND sk = ?`).get(key.pk, key.sk) as
      | Row
      | undefined;
    return row ? decodeItem(key.pk, row.sk, row.attrs, row.bin) : undefined;
  }

  #querySql(pk: string, options: QueryOptions): { sql: string; params: SortKey[] } {
    const where = ["pk = ?"];
    const params: SortKey[] = [pk];
    const bound = (op: string, value: SortKey) => {
      where.push(`sk ${op} ?`);
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
    // LIMIT is bound (-1: none) so that one prepared statement serves every page size.
    params.push(options.limit ?? -1);
    return {
      sql: `SELECT sk, attrs, bin FROM ${this.#name} WHERE ${where.join(" AND ")} ORDER BY sk ${order} LIMIT ?`,
      params,
    };
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

  /** Deletes items whose TTL passed over an hour ago, as DynamoDB's background TTL would by then. */
  #sweepExpired(): void {
    const attribute = this.spec.ttlAttribute;
    if (attribute === undefined || /["\\]/.test(attribute)) return;
    const path = `$."${storedName(attribute)}"`;
    const now = Math.floor(Date.now() / 1000);
    this.#db
      .prepare(
        `DELETE FROM ${this.#name} WHERE json_type(attrs, ?) IN ('integer', 'real') AND json_extract(attrs, ?) BETWEEN ? AND ?`,
      )
      .run(path, path, now - TTL_HORIZON_SECONDS, now - TTL_GRACE_SECONDS);
  }
}
