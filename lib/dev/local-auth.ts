/** @module The auth gate of a local process (`nimbus dev`, `nimbus proxy`). */
import { ACL_TABLE, AclStore, AesGcmSealer } from "../broker/security/index.js";
import { RequestAuth } from "../http/authorize.js";
import { DurableNonces } from "../http/replay-guard.js";
import type { Storage } from "../storage/storage.js";
import type { LocalAuthOptions } from "./local-server-options.js";

/** The auth gate of a local process: its users in the store's ACL table, their secrets sealed with the master key. */
export function requestAuth(storage: Storage, auth: LocalAuthOptions): RequestAuth {
  return new RequestAuth({
    store: new AclStore(storage.table(ACL_TABLE), new AesGcmSealer(auth.masterKey)),
    nonces: new DurableNonces(storage.table(ACL_TABLE)),
    root: auth.root,
    cacheMs: auth.cacheMs,
    replay: auth.replay,
  });
}
