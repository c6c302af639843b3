/**
 * @module The local server's keys (docs/security.md): the ACL master key (NIMBUS_ACL_MASTER_KEY, or
 * `acl-master.key`), which seals users' secrets, and the seal key of webhook secrets (NIMBUS_SEAL_KEY, or
 * `seal.key`): from the environment, or a key file made once in the data folder, readable by its owner only.
 */
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { newMasterKey, parseMasterKey } from "../broker/security/index.js";

/**
 * The key of `fromEnv` (hex or base64), else that of `keyFile`, which is created with a new key if missing. The
 * file appears whole or not at all (written aside, then linked into place), so processes starting together on one
 * folder (`nimbus dev --workers`) never read a half-written key, and the first to link it wins for all.
 */
export function loadMasterKey(fromEnv: string | undefined, keyFile: string): Uint8Array {
  if (fromEnv) return parseMasterKey(fromEnv);
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true });
    const aside = `${keyFile}.${process.pid}.new`;
    writeFileSync(aside, `${newMasterKey()}\n`, { mode: 0o600 });
    try {
      linkSync(aside, keyFile);
    } catch (err) {
      // Another process linked its key first: that one is the key.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      rmSync(aside, { force: true });
    }
  }
  return parseMasterKey(readFileSync(keyFile, "utf8"));
}
