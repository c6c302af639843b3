/**
 * @module The stage's auth secrets (docs/security.md), on a stage with `auth: "acl"`: the master key that seals
 * users' secrets in the acl table, and the root (Super) user's password. Both are SST secrets, kept in SSM
 * Parameter Store as SecureStrings (encrypted by KMS): `npx sst secret set NimbusAclMasterKey <64 hex>` and
 * `npx sst secret set NimbusRootPassword <password>` before the first deploy.
 */
import { settings } from "./config.js";

export const aclSecrets =
  settings.auth === "acl"
    ? { masterKey: new sst.Secret("NimbusAclMasterKey"), rootPassword: new sst.Secret("NimbusRootPassword") }
    : undefined;

if (settings.auth === "public") {
  console.warn(
    `\n!! nimbus: stage "${$app.stage}" deploys a PUBLIC API: anyone with its URL may send, consume, delete topics ` +
      'and rewrite offsets. Set auth to "acl" in lib/config/stages.ts unless this is what you want.\n',
  );
}

/**
 * The key that seals subscriptions' webhook signing secrets in the routes table (every stage: `npx sst secret set
 * NimbusSealKey <64 hex>` before the first deploy; `openssl rand -hex 32` makes one). Only the functions that
 * seal or open them get it: Subscriptions and Dispatch (`sealsSecrets` in infra/manifest.ts).
 */
export const sealKey = new sst.Secret("NimbusSealKey");
