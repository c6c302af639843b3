/**
 * @module The layering rule, as data and a checker: which part of the code may import which. Layers run
 * one way — core ← protocol ← SDK; core/protocol ← broker ← storage ports ← adapters — and only
 * `functions/` and the local server (`lib/dev/`) wire adapters; the web console (`lib/console/`) sees only
 * core and protocol. test/protocol/layers.test.ts runs it over the
 * repository (and over a canary that must fail).
 */
import path from "node:path";

export type Layer =
  | "core"
  | "protocol"
  | "client"
  | "storage"
  | "storage-local"
  | "storage-aws"
  | "broker"
  | "config"
  | "http"
  | "grpc"
  | "dev"
  | "cli"
  | "console"
  | "functions"
  | "infra";

/** Longest prefix first: the layer of a repository path. */
const LAYER_OF_PREFIX: [string, Layer][] = [
  ["lib/storage/local/", "storage-local"],
  ["lib/storage/aws/", "storage-aws"],
  ["lib/storage/", "storage"],
  ["lib/core/", "core"],
  ["lib/protocol/", "protocol"],
  ["lib/client/", "client"],
  ["lib/broker/", "broker"],
  ["lib/config/", "config"],
  ["lib/http/", "http"],
  ["lib/grpc/", "grpc"],
  ["lib/dev/", "dev"],
  ["lib/cli/", "cli"],
  ["lib/console/", "console"],
  ["functions/", "functions"],
  ["infra/", "infra"],
  ["sst.config.ts", "infra"],
];

/** What each layer may import besides itself. */
export const ALLOWED: Readonly<Record<Layer, readonly Layer[]>> = {
  core: [],
  protocol: ["core"],
  client: ["core", "protocol"],
  storage: ["core"],
  "storage-local": ["core", "storage"],
  "storage-aws": ["core", "storage"],
  broker: ["core", "protocol", "storage"],
  // The config maps settings to broker options (create-broker.ts); the broker never reads the config.
  config: ["core", "protocol", "storage", "broker"],
  http: ["core", "protocol", "storage", "broker"],
  // The gRPC door beside the HTTP one: the same shape, and the HTTP side's auth gate (users, signatures' cache).
  grpc: ["core", "protocol", "storage", "broker", "http"],
  // The local server wires the adapters, like functions/ on AWS.
  dev: ["core", "protocol", "storage", "storage-local", "storage-aws", "broker", "config", "http", "grpc"],
  cli: ["core", "protocol", "client", "config", "dev"],
  // The web console runs in a browser: the protocol's types and paths, core's names and codes, nothing else.
  console: ["core", "protocol"],
  functions: ["core", "protocol", "storage", "storage-aws", "broker", "config", "http"],
  infra: ["core", "protocol", "config"],
};

export function layerOf(file: string): Layer | undefined {
  return LAYER_OF_PREFIX.find(([prefix]) => file === prefix || file.startsWith(prefix))?.[1];
}

/** Relative module specifiers of `import … from`, `export … from` and `import(…)` in a TypeScript text. */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']/g))
    out.push(m[1] ?? "");
  for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) out.push(m[1] ?? "");
  return out.filter((s) => s.startsWith("."));
}

export interface WrongWayImport {
  file: string;
  imports: string;
  from: Layer;
  to: Layer;
}

/** Every import in `files` (repository paths and their text) that its layer may not make. */
export function wrongWayImports(files: readonly { path: string; text: string }[]): WrongWayImport[] {
  const wrong: WrongWayImport[] = [];
  for (const file of files) {
    const from = layerOf(file.path);
    if (from === undefined) continue;
    for (const spec of importsOf(file.text)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file.path), spec));
      const to = layerOf(target);
      if (to === undefined || to === from || ALLOWED[from].includes(to)) continue;
      wrong.push({ file: file.path, imports: target, from, to });
    }
  }
  return wrong;
}
