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
  | "remoting"
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
  ["lib/remoting/", "remoting"],
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
  // The remoting door (RocketMQ 4.x's TCP protocol): the same shape, on the HTTP door's context and broker scope.
  remoting: ["core", "protocol", "storage", "broker", "http"],
  // The local server wires the adapters, like functions/ on AWS.
  dev: ["core", "protocol", "storage", "storage-local", "storage-aws", "broker", "config", "http", "grpc", "remoting"],
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

/** The capability folder a file is in: `lib/broker/<c>/` or `lib/client/<c>/` (undefined for a layer's root files). */
export function capabilityOf(file: string): string | undefined {
  const m = /^lib\/(broker|client)\/([a-z0-9-]+)\//.exec(file);
  return m ? `lib/${m[1]}/${m[2]}` : undefined;
}

/** Resolves a relative `.js` specifier of `from` to the repository path of its TypeScript source. */
function resolveImport(from: string, spec: string, known: ReadonlySet<string>): string {
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  const base = target.replace(/\.js$/, "");
  for (const candidate of [`${base}.ts`, `${base}.tsx`, target]) if (known.has(candidate)) return candidate;
  return target.endsWith(".js") ? `${base}.ts` : target;
}

export interface PastIndexImport {
  file: string;
  imports: string;
}

/**
 * Imports into a capability folder from outside it that do not go through the folder's `index.ts`, and
 * imports of a root file of lib/broker or lib/client from outside that layer other than its `index.ts`: a
 * folder speaks to the rest only through its public face.
 */
export function pastIndexImports(files: readonly { path: string; text: string }[]): PastIndexImport[] {
  const known = new Set(files.map((f) => f.path));
  const wrong: PastIndexImport[] = [];
  for (const file of files) {
    const own = capabilityOf(file.path);
    for (const spec of importsOf(file.text)) {
      const target = resolveImport(file.path, spec, known);
      const cap = capabilityOf(target);
      if (cap !== undefined) {
        if (cap !== own && target !== `${cap}/index.ts`) wrong.push({ file: file.path, imports: target });
        continue;
      }
      // A root file of lib/broker or lib/client (broker.ts, message.ts, ...) is that layer's own: from outside
      // the layer, only its index.ts is the way in.
      const layer = /^lib\/(broker|client)\/[^/]+$/.exec(target)?.[1];
      if (layer === undefined || file.path.startsWith(`lib/${layer}/`) || target === `lib/${layer}/index.ts`) continue;
      wrong.push({ file: file.path, imports: target });
    }
  }
  return wrong;
}

/** Strongly connected components of a graph with more than one node or a self-loop (Tarjan, iterative). */
function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: [string, string[]][] = [];
    const visit = (node: string) => {
      index.set(node, next);
      low.set(node, next++);
      stack.push(node);
      onStack.add(node);
      work.push([node, [...(graph.get(node) ?? [])]]);
    };
    visit(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      if (top === undefined) break;
      const [node, pending] = top;
      const child = pending.pop();
      if (child !== undefined) {
        if (!index.has(child)) visit(child);
        else if (onStack.has(child)) low.set(node, Math.min(low.get(node) ?? 0, index.get(child) ?? 0));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent[0], Math.min(low.get(parent[0]) ?? 0, low.get(node) ?? 0));
      if (low.get(node) !== index.get(node)) continue;
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) cycles.push(component.sort());
    }
  }
  return cycles;
}

/**
 * Import circles: between files (every relative import, type-only ones included) and between capability
 * folders (an import from one folder into another is an edge from folder to folder).
 */
export function importCycles(files: readonly { path: string; text: string }[]): {
  files: string[][];
  folders: string[][];
} {
  const known = new Set(files.map((f) => f.path));
  const fileGraph = new Map<string, Set<string>>();
  const folderGraph = new Map<string, Set<string>>();
  for (const file of files) {
    const edges = fileGraph.get(file.path) ?? new Set<string>();
    fileGraph.set(file.path, edges);
    const own = capabilityOf(file.path);
    for (const spec of importsOf(file.text)) {
      const target = resolveImport(file.path, spec, known);
      if (!known.has(target)) continue;
      edges.add(target);
      const cap = capabilityOf(target);
      if (own === undefined || cap === undefined || cap === own) continue;
      const folderEdges = folderGraph.get(own) ?? new Set<string>();
      folderGraph.set(own, folderEdges);
      folderEdges.add(cap);
    }
  }
  return { files: cyclesOf(fileGraph), folders: cyclesOf(folderGraph) };
}
