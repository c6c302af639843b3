/**
 * @module The local server's keys (docs/security.md): the ACL master key (NIMBUS_ACL_MASTER_KEY, or
 * `acl-master.key`), which seals users' secrets, and the seal key of webhook secrets (NIMBUS_SEAL_KEY, or
 * `seal.key`): from the environment, or a key file made once in the data folder, readable by its owner only.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { newMasterKey, parseMasterKey } from "../broker/security/index.js";

/** The key of `fromEnv` (hex or base64), else that of `keyFile`, which is created with a new key if missing. */
export function loadMasterKey(fromEnv: string | undefined, keyFile: string): Uint8Array {
  if (fromEnv) return parseMasterKey(fromEnv);
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, `${newMasterKey()}\n`, { mode: 0o600, flag: "wx" });
  }
  return parseMasterKey(readFileSync(keyFile, "utf8"));
}
