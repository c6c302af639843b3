/**
 * @module The local server as a chaos target: `startLocalServer` on the embedded store in its own OS
 * process, so the runner can SIGKILL it mid-request and start it again on the same port and data folder.
 * argv: dataDir, port (0: any). Tells the runner its port over IPC once it listens.
 */
import { startLocalServer } from "../../lib/dev/local-server.js";

const [dataDir, port] = process.argv.slice(2);
if (!dataDir || port === undefined) throw new Error("usage: server.ts DATA_DIR PORT");
const server = await startLocalServer({ port: Number(port), storage: { kind: "local", dataDir } });
process.send?.({ port: server.port });
