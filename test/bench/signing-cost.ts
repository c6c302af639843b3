/**
 * @module `npx tsx test/bench/signing-cost.ts [--requests N]`: the CPU of a Nimbus signature on one 1 KiB JSON send
 * (docs/security.md "Signing scheme"), in this process, per request: the client's signing (`signNimbusRequest`),
 * the local server's check as it runs (the headers before the body, `signatureMatches(..., true)`, then the body
 * against its claimed hash, `bodyMatchesClaim`), and the check in one pass as Lambda makes it. Each loop runs
 * `--requests` (20,000) times after 2,000 to warm up; the same user and day throughout, as a busy client's are.
 */
import { parseArgs } from "node:util";
import {
  bodyMatchesClaim,
  parseSignature,
  type ReceivedRequest,
  signatureMatches,
  signNimbusRequest,
} from "../../lib/core/request-signing.js";

const { values } = parseArgs({ options: { requests: { type: "string", default: "20000" } } });
const requests = Number(values.requests);
if (!Number.isInteger(requests) || requests < 1)
  throw new Error(`--requests must be a whole number, got ${values.requests}`);
const credentials = { accessKey: "alice", secretKey: "alice-secret-0123" };
const body = JSON.stringify({ topic: "T", messages: [{ body: Buffer.alloc(1024, 97).toString("base64") }] });
const url = "http://127.0.0.1:9876/send";
const plain = { "content-type": "application/json" };
const sign = () => signNimbusRequest({ method: "POST", url, headers: plain, body, credentials });
const signed: Record<string, string> = { ...plain, ...sign(), host: "127.0.0.1:9876" };
const request: ReceivedRequest = {
  method: "POST",
  host: "127.0.0.1:9876",
  rawPath: "/send",
  rawQueryString: "",
  header: (name) => signed[name],
  body: Buffer.from(body),
};

/** µs per run of `work`, over `requests` runs after 2,000 unmeasured. */
function timed(work: () => void): number {
  for (let i = 0; i < 2_000; i++) work();
  const t0 = performance.now();
  for (let i = 0; i < requests; i++) work();
  return ((performance.now() - t0) * 1000) / requests;
}

const ok = (passed: boolean) => {
  if (!passed) throw new Error("the signature did not match");
};
const signUs = timed(sign);
const localUs = timed(() => {
  ok(signatureMatches(request, parseSignature(request, Date.now()), credentials.secretKey, true));
  ok(bodyMatchesClaim(request));
});
const onePassUs = timed(() =>
  ok(signatureMatches(request, parseSignature(request, Date.now()), credentials.secretKey)),
);
console.log(
  `per 1 KiB send, ${requests} requests: signing ${signUs.toFixed(1)} µs; the local server's check (headers, then the body's hash) ${localUs.toFixed(1)} µs; one pass (Lambda) ${onePassUs.toFixed(1)} µs`,
);
