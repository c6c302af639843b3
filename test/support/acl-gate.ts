/**
 * @module The auth gate's unit tests' pieces: an ACL store on a fresh embedded store with some users, and a request
 * as the server receives it (host `h`), signed by a user.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ACL_TABLE, AclStore } from "../../lib/broker/security/acl-store.js";
import { AesGcmSealer } from "../../lib/broker/security/secret-sealer.js";
import { type NimbusCredentials, type ReceivedRequest, signNimbusRequest } from "../../lib/core/request-signing.js";
import type { Storage } from "../../lib/storage/index.js";
import { createLocalStorage } from "../../lib/storage/local/index.js";

export interface AclFixture {
  store: AclStore;
  storage: Storage;
}

/** An ACL store in a fresh temp folder holding `users` (Normal, enabled); close `storage` after. */
export async function openAclFixture(users: NimbusCredentials[]): Promise<AclFixture> {
  const storage = createLocalStorage({ dataDir: mkdtempSync(join(tmpdir(), "nimbus-acl-")) });
  const store = new AclStore(storage.table(ACL_TABLE), new AesGcmSealer(new Uint8Array(randomBytes(32))));
  for (const u of users)
    await store.createUser({ username: u.accessKey, userType: "Normal", userStatus: "enable" }, u.secretKey);
  return { store, storage };
}

export interface SignedCall {
  method: "GET" | "POST";
  path: string;
  credentials: NimbusCredentials;
  /** The body signed; none: an empty one. */
  body?: string | undefined;
  /** The body sent, when a test swaps it; default the signed one. */
  sentBody?: string | undefined;
  now?: Date | undefined;
}

/** `call` signed by its user and received by a server at host `h`. */
export function receivedSigned(call: SignedCall): ReceivedRequest {
  const { method, path, credentials, body, now } = call;
  const headers = signNimbusRequest({ method, url: `http://h${path}`, body, credentials, now });
  return {
    method,
    host: "h",
    rawPath: path,
    rawQueryString: "",
    header: (n) => (n === "host" ? "h" : headers[n]),
    body: Buffer.from(call.sentBody ?? body ?? ""),
  };
}
