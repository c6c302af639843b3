/**
 * @module Counts the requests a storage adapter sends, by kind, so tests and benchmarks can report AWS
 * requests (and DynamoDB capacity units) per message. Both adapters count the same way: what the AWS
 * adapter sends to AWS is exactly what the embedded adapter counts for the same call.
 */

export interface RequestCounts {
  /** DynamoDB GetItem + Query calls. */
  tableReads: number;
  /** DynamoDB PutItem + DeleteItem calls (failed conditional puts included: they are billed). */
  tableWrites: number;
  /** Read capacity units: 4 KB per unit, half for eventually consistent reads. */
  readUnits: number;
  /** Write capacity units: 1 KB per unit, at least 1 per write. */
  writeUnits: number;
  objectPuts: number;
  objectGets: number;
  /** Bytes the object GETs returned (what a reader paid to move, whether it needed them or not). */
  objectBytesRead: number;
  objectLists: number;
  objectDeletes: number;
}

/** No request at all: what a fresh counter holds, and the base of an expected count. */
export const NO_REQUESTS: Readonly<RequestCounts> = {
  tableReads: 0,
  tableWrites: 0,
  readUnits: 0,
  writeUnits: 0,
  objectPuts: 0,
  objectGets: 0,
  objectBytesRead: 0,
  objectLists: 0,
  objectDeletes: 0,
};

export class RequestCounter {
  #counts: RequestCounts = { ...NO_REQUESTS };

  /** One read of `bytes` (the items returned; a query of nothing still costs one unit). */
  tableRead(bytes: number, consistent: boolean): void {
    const units = Math.max(1, Math.ceil(bytes / 4096));
    this.#counts.tableReads++;
    this.#counts.readUnits += consistent ? units : units / 2;
  }

  /** One write of an item of `bytes`: a unit per KB, at least one. */
  tableWrite(bytes: number): void {
    this.#counts.tableWrites++;
    this.#counts.writeUnits += Math.max(1, Math.ceil(bytes / 1024));
  }

  objectPut(): void {
    this.#counts.objectPuts++;
  }

  objectGet(): void {
    this.#counts.objectGets++;
  }

  /** The bytes one object GET returned. */
  objectBytes(bytes: number): void {
    this.#counts.objectBytesRead += bytes;
  }

  objectList(): void {
    this.#counts.objectLists++;
  }

  objectDelete(): void {
    this.#counts.objectDeletes++;
  }

  snapshot(): RequestCounts {
    return { ...this.#counts };
  }

  reset(): void {
    this.#counts = { ...NO_REQUESTS };
  }
}

/** The difference `after - before`, for measuring one operation. */
export function diffCounts(after: RequestCounts, before: RequestCounts): RequestCounts {
  const out = { ...NO_REQUESTS };
  for (const k of Object.keys(out) as (keyof RequestCounts)[]) out[k] = after[k] - before[k];
  return out;
}
