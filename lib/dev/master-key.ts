/**
 * @module The local server's ACL master key (docs/security.md): NIMBUS_ACL_MASTER_KEY, or a key file made
 * once in the data folder, readable by its owner only. It seals users' secrets in the store.
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
