/** @module Reads every item of one partition, page by page. For small partitions (routes, offsets, clients). */
import type { Item, QueryOptions, Table } from "../../storage/table.js";

export async function queryAll(
  table: Table,
  pk: string,
  options: Omit<QueryOptions, "startAfter"> = {},
): Promise<Item[]> {
  const items: Item[] = [];
  let startAfter: QueryOptions["startAfter"];
  do {
    const page = await table.query(pk, { ...options, startAfter });
    items.push(...page.items);
    startAfter = page.lastSk;
  } while (startAfter !== undefined);
  return items;
}
