export { ACL_TABLE, AclStore, type StoredUser } from "./acl-store.js";
export { AesGcmSealer, newMasterKey, parseMasterKey, type SecretSealer } from "./secret-sealer.js";
