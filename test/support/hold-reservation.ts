/**
 * @module `holdNextReservation(storage)`: the store's offset reservations (`add`, or `addThenPut` on the embedded
 * store) held still until `release`, so a send in its route cannot finish (a request in progress, a line behind
 * it) — for the load-shedding path tests.
 */
import { QUEUE_INDEX_TABLE } from "../../lib/broker/queue-log/queue-index.js";
import type { Storage } from "../../lib/storage/storage.js";
import type { Table } from "../../lib/storage/table.js";

export interface HeldReservation {
  release: () => void;
  /** Whether a send has reached the held reservation. */
  holding: () => boolean;
  /** Releases and puts the table's own `add` back. */
  restore: () => void;
}

export function holdNextReservation(storage: Storage): HeldReservation {
  const index = storage.table(QUEUE_INDEX_TABLE) as Table & { add: Table["add"] };
  const add = index.add.bind(index);
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding = false;
  index.add = async (...args) => {
    holding = true;
    await held;
    return add(...args);
  };
  // The embedded store reserves with the index put, in one transaction.
  const addThenPut = index.addThenPut?.bind(index);
  if (addThenPut !== undefined)
    index.addThenPut = async (write) => {
      holding = true;
      await held;
      return addThenPut(write);
    };
  return {
    release,
    holding: () => holding,
    restore: () => {
      release();
      delete (index as { add?: unknown }).add;
      delete (index as { addThenPut?: unknown }).addThenPut;
    },
  };
}
