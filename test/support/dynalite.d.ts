/** @module The slice of dynalite 4's API the tests use (the package ships no types). */
declare module "dynalite" {
  import type { Server } from "node:http";

  interface DynaliteOptions {
    /** LevelDB folder; in memory when absent. */
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }

  /** An HTTP server speaking DynamoDB's JSON protocol; `close` also closes its store. */
  function dynalite(options?: DynaliteOptions): Server;
  export default dynalite;
}
