/**
 * @module The server process of refusal-cost.ts: `refuse` (the local server, its event loop taken as always late
 * and one request held in progress, so every send is refused on arrival), `serve` (the local server as it is) or `bare` (a `node:http` server that
 * answers every request 503 with a fixed body: the floor of any answer). Prints `URL <url>` once listening.
 */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { startLocalServer } from "../../lib/dev/local-server.js";

const kind = process.argv[2];
if (kind === "bare") {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(503, { "content-type": "application/json" });
    res.end('{"code":"SYSTEM_BUSY","message":"busy"}');
  });
  server.listen(0, "127.0.0.1", () => console.log(`URL http://127.0.0.1:${(server.address() as AddressInfo).port}`));
} else {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "nimbus-refusal-cost-"));
  const server = await startLocalServer({
    port: 0,
    storage: { kind: "local", dataDir, flush: "async" },
    background: false,
    ...(kind === "refuse" ? { loadShedding: { lagMs: () => Number.POSITIVE_INFINITY } } : {}),
  });
  // A request in progress for the whole run: the lag counts only then (a lone request is never refused on it).
  if (kind === "refuse") await server.shedder.enter();
  console.log(`URL ${server.url}`);
}
