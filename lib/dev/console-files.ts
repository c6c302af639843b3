/**
 * @module The console's static files on the local server: `GET /console/…` answers the files of
 * lib/console/build (built by `npm run build:console`, committed). They are not API endpoints: on AWS the
 * console is a static site of its own (infra/console.ts), not a route of the API, so lib/protocol does not
 * declare them (docs/console.md).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ErrorCode } from "../core/errors.js";

/** The path the console is served under. */
export const CONSOLE_PATH = "/console";
const CONSOLE_NAME = CONSOLE_PATH.slice(1);

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
};

/** The built console: next to this module in the repository, or the repository's from `dist/lib/dev`. */
export function consoleBuildDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, "../console/build"), path.join(here, "../../../lib/console/build")];
  return candidates.find((dir) => existsSync(path.join(dir, "index.html"))) ?? (candidates[0] as string);
}

/**
 * What a browser may do with the console's pages: run only the console's own scripts and styles, call only
 * its own origin (the API), never be framed by another page (clickjacking), and never sniff a type.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' http: https: ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/**
 * Answers a request for the console and says true, or says false when the request is not for it. Only
 * GET and HEAD, only the build folder's own files (no `..`, no sub-folders): anything else under
 * /console is a 404 with the API's error shape.
 */
export async function serveConsole(req: IncomingMessage, res: ServerResponse, dir: string): Promise<boolean> {
  const target = req.url ?? "/";
  // Every request passes here, the API's sends too: only a target that spells the console's name is parsed (a URL's
  // path keeps letters as written, so no other target can name it), which spares each send a URL parse (5 µs).
  if (!target.includes(CONSOLE_NAME)) return false;
  let pathname: string;
  try {
    pathname = new URL(target, "http://localhost").pathname;
  } catch {
    return false; // not a URL (`//[console`): the API's router answers it as it answers other bad targets
  }
  if (pathname !== CONSOLE_PATH && !pathname.startsWith(`${CONSOLE_PATH}/`)) return false;
  if (pathname === CONSOLE_PATH) {
    // Relative asset paths need the trailing slash.
    res.writeHead(308, { location: `${CONSOLE_PATH}/` }).end();
    return true;
  }
  const name = pathname.slice(CONSOLE_PATH.length + 1) || "index.html";
  const type = CONTENT_TYPES[path.extname(name)];
  if (req.method !== "GET" && req.method !== "HEAD") {
    notFound(res, 405, `${req.method} ${pathname}: the console's files are read with GET`);
    return true;
  }
  if (!/^[\w.-]+$/.test(name) || name.startsWith(".") || type === undefined) {
    notFound(res, 404, `no console file ${pathname}`);
    return true;
  }
  let body: Buffer;
  try {
    body = await readFile(path.join(dir, name));
  } catch {
    notFound(res, 404, `no console file ${pathname} (is the console built? npm run build:console)`);
    return true;
  }
  res.writeHead(200, {
    "content-type": type,
    "content-length": body.length,
    "cache-control": "no-cache",
    ...CONSOLE_HEADERS,
  });
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}

function notFound(res: ServerResponse, status: number, message: string): void {
  res
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ code: ErrorCode.REQUEST_CODE_NOT_SUPPORTED, message }));
}
