/**
 * @module The SQL tables behind one `SqliteTable`, made or brought up to date when it opens: `"t_<name>"`, the rows
 * `(pk, sk, attrs, bin, bref)` under a `(pk, sk)` primary key WITHOUT ROWID, and `"b_<name>"`, the blobs that hold
 * large rows' bytes (`id` INTEGER PRIMARY KEY, so a new blob goes at the end of its tree). Two triggers delete a
 * row's blob in the statement that deletes the row or makes it name another (`"bd_<name>"`, `"bu_<name>"`): no
 * statement can leave a row naming a blob that is gone, or leave behind the blob of a row it deleted or rewrote.
 * Then the items whose TTL passed long ago are swept, as DynamoDB's background TTL would have by then.
 */
import type { Database } from "better-sqlite3";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { TableSpec } from "../table.js";
import { storedName } from "./item-codec.js";
import { retryWhileBusy } from "./sqlite-errors.js";

/** DynamoDB TTL ignores expiry times more than five years in the past. */
const TTL_HORIZON_SECONDS = 5 * 365 * 24 * 3600;
/** Expired items are swept when a table opens, this long after they expire (TTL is lazy anyway). */
const TTL_GRACE_SECONDS = 3600;

/** The quoted SQL names of a table's rows and of its blobs. */
export interface SqlNames {
  rows: string;
  blobs: string;
}

export const sqlNamesOf = (spec: TableSpec): SqlNames => ({ rows: `"t_${spec.name}"`, blobs: `"b_${spec.name}"` });

/**
 * Creates the two tables if missing and adds the columns a table made by an earlier version lacks; throws
 * PARAMETER_ILLEGAL when the table exists with another sort key type. Runs SQLite's statements as they are (the
 * caller wraps them): other processes opening the same folder may do the same at the same moment.
 */
export function openTableSchema(db: Database, spec: TableSpec): void {
  const names = sqlNamesOf(spec);
  const skType = spec.sortKeyType === "number" ? "REAL" : "TEXT";
  const busyTimeoutMs = Number(db.pragma("busy_timeout", { simple: true }));
  retryWhileBusy(
    () =>
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${names.rows} (pk TEXT NOT NULL, sk ${skType} NOT NULL, attrs TEXT NOT NULL,` +
          " bin BLOB, bref INTEGER, PRIMARY KEY (pk, sk)) WITHOUT ROWID",
      ),
    busyTimeoutMs,
  );
  retryWhileBusy(
    () => db.exec(`CREATE TABLE IF NOT EXISTS ${names.blobs} (id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)`),
    busyTimeoutMs,
  );
  addColumn(db, names.rows, "bin", "BLOB", busyTimeoutMs);
  const columns = addColumn(db, names.rows, "bref", "INTEGER", busyTimeoutMs);
  const dropOld = `BEGIN DELETE FROM ${names.blobs} WHERE id = OLD.bref; END`;
  retryWhileBusy(
    () =>
      db.exec(
        `CREATE TRIGGER IF NOT EXISTS "bd_${spec.name}" AFTER DELETE ON ${names.rows} WHEN OLD.bref IS NOT NULL ${dropOld};` +
          `CREATE TRIGGER IF NOT EXISTS "bu_${spec.name}" AFTER UPDATE OF bref ON ${names.rows}` +
          ` WHEN OLD.bref IS NOT NULL AND OLD.bref IS NOT NEW.bref ${dropOld};`,
      ),
    busyTimeoutMs,
  );
  const declared = columns.find((c) => c.name === "sk")?.type;
  if (declared !== skType) {
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `table ${spec.name} exists with another sort key type (${declared}, asked ${skType})`,
    );
  }
  sweepExpired(db, spec, names);
}

/**
 * The table's columns, with `name` added to a table created before it existed: `bin` (the bytes of binary
 * attributes, item-codec.ts; the rows before it keep their base64 attributes, read as before) or `bref` (a row's
 * blob; the rows before it keep their bytes in `bin`, read as before). Another process may add it at the same
 * moment: a duplicate column is then simply there.
 */
function addColumn(
  db: Database,
  table: string,
  name: "bin" | "bref",
  type: string,
  busyTimeoutMs: number,
): { name: string; type: string }[] {
  const columns = () => db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string }[];
  const found = columns();
  if (found.some((c) => c.name === name)) return found;
  try {
    retryWhileBusy(() => db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`), busyTimeoutMs);
  } catch (err) {
    if (!/duplicate column/i.test(String((err as Error).message))) throw err;
  }
  return columns();
}

/** Deletes the items whose TTL passed over an hour ago (their blobs with them, by the trigger). */
function sweepExpired(db: Database, spec: TableSpec, names: SqlNames): void {
  const attribute = spec.ttlAttribute;
  if (attribute === undefined || /["\\]/.test(attribute)) return;
  const path = `$."${storedName(attribute)}"`;
  const now = Math.floor(Date.now() / 1000);
  db.prepare(
    `DELETE FROM ${names.rows} WHERE json_type(attrs, ?) IN ('integer', 'real') AND json_extract(attrs, ?) BETWEEN ? AND ?`,
  ).run(path, path, now - TTL_HORIZON_SECONDS, now - TTL_GRACE_SECONDS);
}
