/** @module Reads infra/ as text, the way SST resolves handler paths: shared by check-infra.ts and the tests. */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface HandlerRef {
  /** Path from the repo root without extension, e.g. `functions/send`. */
  file: string;
  exportName: string;
}

/** Every `functions/<file>.<export>` string in infra/*.ts, once each, in file order. */
export async function handlersNamedInInfra(): Promise<HandlerRef[]> {
  const dir = path.join(ROOT, "infra");
  const found = new Map<string, HandlerRef>();
  for (const name of (await readdir(dir)).filter((f) => f.endsWith(".ts")).sort()) {
    const text = await readFile(path.join(dir, name), "utf8");
    for (const m of text.matchAll(/["'`](functions\/[\w/-]+)\.(\w+)["'`]/g)) {
      const [, file, exportName] = m;
      if (file !== undefined && exportName !== undefined) found.set(`${file}.${exportName}`, { file, exportName });
    }
  }
  return [...found.values()];
}
