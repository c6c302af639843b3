/**
 * @module A self-signed TLS certificate for 127.0.0.1 and localhost, made by the `openssl` CLI in a temp folder
 * (node:crypto makes keys, not X.509 certificates), and trusted by every gRPC client of this process: grpc-js
 * reads `GRPC_DEFAULT_SSL_ROOTS_FILE_PATH` once, when it loads (the roots RocketMQ's Node.js client trusts with
 * `sslEnabled`), so a test file imports this module before anything that imports grpc-js. Without openssl the
 * certificate is undefined and `certificateUnavailable` says why (with CI=true that is an error).
 * `makeTestCertificate` makes another one (trusted by nobody: a target whose certificate is not trusted, or a
 * certificate for another host name).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";

export interface TestCertificate {
  cert: Buffer;
  key: Buffer;
  /** The certificate's PEM file (for a child process's `--target-ca`, say); gone after `remove()`. */
  certFile: string;
  /** Removes the temp folder. */
  remove(): void;
}

/** A new self-signed certificate for `subjectAltName` (default 127.0.0.1 and localhost), or why openssl made none. */
export function makeTestCertificate(subjectAltName = "IP:127.0.0.1,DNS:localhost"): TestCertificate | string {
  const dir = mkdtempSync(join(os.tmpdir(), "nimbus-tls-"));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const made = spawnSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      `subjectAltName=${subjectAltName}`,
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ],
    { encoding: "utf8", timeout: 30_000 },
  );
  if (made.status !== 0) {
    remove();
    return `openssl could not make a certificate: ${made.error?.message ?? made.stderr.slice(-300)}`;
  }
  const certFile = join(dir, "cert.pem");
  return { cert: readFileSync(certFile), key: readFileSync(join(dir, "key.pem")), certFile, remove };
}

const made = makeTestCertificate();
if (typeof made !== "string") process.env.GRPC_DEFAULT_SSL_ROOTS_FILE_PATH = made.certFile;

export const testCertificate: TestCertificate | undefined = typeof made === "string" ? undefined : made;

export const certificateUnavailable: string | undefined = typeof made === "string" ? made : undefined;

if (certificateUnavailable !== undefined && process.env.CI === "true")
  throw new Error(`a TLS test certificate is required in CI: ${certificateUnavailable}`);
