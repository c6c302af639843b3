/**
 * @module Users' secrets at rest: sealed with AES-256-GCM under the stage's master key before they reach a
 * table, the user name bound in as associated data (a sealed secret copied onto another user does not
 * open). The master key never touches a table: on AWS it is an SST secret (SSM SecureString, itself
 * encrypted by KMS: an envelope), locally a file of the data folder or NIMBUS_ACL_MASTER_KEY (docs/security.md).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ErrorCode, NimbusError } from "../../core/errors.js";

/** The port: seal a user's secret for storage, open it to check a signature. */
export interface SecretSealer {
  seal(username: string, secret: string): string;
  open(username: string, sealed: string): string;
}

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A 32-byte master key from its 64 hex digits (or base64), or PARAMETER_ILLEGAL. */
export function parseMasterKey(text: string): Uint8Array {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.byteLength !== 32)
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "an ACL master key is 32 bytes (64 hex digits or base64)");
  return new Uint8Array(key);
}

/** A new random master key, as 64 hex digits. */
export const newMasterKey = (): string => randomBytes(32).toString("hex");

export class AesGcmSealer implements SecretSealer {
  readonly #key: Uint8Array;

  constructor(masterKey: Uint8Array) {
    if (masterKey.byteLength !== 32) throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "the master key is 32 bytes");
    this.#key = masterKey;
  }

  seal(username: string, secret: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(username, "utf8"));
    const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`;
  }

  open(username: string, sealed: string): string {
    const [version, payload] = sealed.split(":");
    const raw = Buffer.from(payload ?? "", "base64");
    if (version !== VERSION || raw.byteLength < IV_BYTES + TAG_BYTES)
      throw new NimbusError(ErrorCode.DATA_CORRUPTED, `the stored secret of ${username} is not a sealed secret`);
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(username, "utf8"));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
    } catch (err) {
      throw new NimbusError(
        ErrorCode.DATA_CORRUPTED,
        `the stored secret of ${username} does not open with this master key (another stage's key, or tampered)`,
        { cause: err },
      );
    }
  }
}
