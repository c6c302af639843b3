/**
 * Runs one function bundle as Lambda's Node runtime does, in this fresh process: the environment is set
 * before the module loads (Init), then each event is invoked in turn through lambda-local (a Lambda context:
 * request id, function name, deadline), the way one container serves one request at a time.
 *
 * Usage: node lambda-runner.mjs <bundle.mjs> <events.json>, with NIMBUS_LAMBDA_LOCAL the path of
 * lambda-local's main file (the runtime's, not the bundle's: the bundle's folder has no node_modules).
 * Prints one JSON line: `{ initMs, invocations: [{ name, ms, result?, error? }] }`, then exits.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, eventsFile] = process.argv.slice(2);
const runtime = process.env.NIMBUS_LAMBDA_LOCAL;
if (bundle === undefined || eventsFile === undefined || runtime === undefined) {
  process.stderr.write("usage: NIMBUS_LAMBDA_LOCAL=<lambda-local> node lambda-runner.mjs <bundle.mjs> <events.json>\n");
  process.exit(2);
}
const lambdaLocal = (await import(pathToFileURL(runtime).href)).default;
const events = JSON.parse(readFileSync(eventsFile, "utf8"));

// Init: the module's top-level code, as Lambda's Init phase runs it (its "Init Duration").
const initStart = performance.now();
const mod = await import(pathToFileURL(bundle).href);
const initMs = performance.now() - initStart;

const invocations = [];
for (const { name, event } of events) {
  const start = performance.now();
  try {
    const result = await lambdaLocal.execute({
      lambdaFunc: mod,
      lambdaHandler: "handler",
      event,
      timeoutMs: 20_000,
      verboseLevel: 0,
    });
    invocations.push({ name, ms: performance.now() - start, result });
  } catch (err) {
    invocations.push({ name, ms: performance.now() - start, error: String(err?.message ?? err) });
  }
}
process.stdout.write(`${JSON.stringify({ initMs, invocations })}\n`);
// A container is frozen after its answer; this one ends (the SDK's keep-alive sockets would hold it up).
process.exit(0);
