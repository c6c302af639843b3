export { ACL_TABLE, AclStore, type StoredUser } from "./acl-store.js";
export { AesGcmSealer, newMasterKey, parseMasterKey } from "./secret-sealer.js";
