/** @module The filter a consuming command's `--subExpression` / `--sql` options name (docs/filters.md). */
import type { FilterExpression } from "../core/filter/index.js";

export interface FilterOptions {
  subExpression: string;
  sql?: string;
}

/** SQL92 over user properties when `--sql` is given, the tag expression otherwise. */
export function filterOf(opts: FilterOptions): FilterExpression {
  return opts.sql === undefined
    ? { type: "TAG", expression: opts.subExpression }
    : { type: "SQL92", expression: opts.sql };
}
