/**
 * @module RocketMQ 4.x's ACL signature, as rocketmq-acl's `AclClientRPCHook` makes it and its
 * `PlainAccessValidator` checks it: the ext fields `AccessKey`, `Signature` and optionally `SecurityToken`, where
 * Signature = Base64(HmacSHA1(secret, the values of every other ext field in the order of their names, then the
 * body)). The user is the Nimbus user whose name is the access key, checked with the auth service every door
 * calls (RequestAuth.authenticateWith): an unknown user and a wrong secret get the same refusal after the same
 * work, and the signatures are compared in constant time. The signature has no date and no nonce (the client's
 * scheme): what bounds a captured request is that signed requests never cross a network in clear (docs/remoting.md).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { type AclUser, USERNAME_PATTERN } from "../core/acl.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import type { RequestAuth } from "../http/authorize.js";

export const ACCESS_KEY_FIELD = "AccessKey";
export const SIGNATURE_FIELD = "Signature";
export const SECURITY_TOKEN_FIELD = "SecurityToken";

/** Base64 of an HMAC-SHA1 (20 bytes): a longer Signature field is refused unread. */
const MAX_SIGNATURE_LENGTH = 64;

/**
 * The bytes the client signs, in order (not copied into one buffer: a body may be megabytes): every ext field's
 * value but the signature's, ordered by field name, then the body.
 */
export function signedContent(
  extFields: Readonly<Record<string, string>>,
  body: Uint8Array | undefined,
): readonly Uint8Array[] {
  // Java's TreeMap orders String keys by UTF-16 code units, as JavaScript's default sort does.
  const names = Object.keys(extFields)
    .filter((name) => name !== SIGNATURE_FIELD)
    .sort();
  const head = Buffer.from(names.map((name) => extFields[name] ?? "").join(""), "utf8");
  return body === undefined ? [head] : [head, body];
}

/** The signature of `content` under `secret`: Base64(HmacSHA1), as AclUtils.calSignature computes it. */
export function remotingSignature(secret: string, content: readonly Uint8Array[]): string {
  const hmac = createHmac("sha1", secret);
  for (const part of content) hmac.update(part);
  return hmac.digest("base64");
}

const unauthenticated = (message: string) => new NimbusError(ErrorCode.UNAUTHENTICATED, message);

/**
 * The user who signed `request`, or UNAUTHENTICATED (NO_PERMISSION on the wire): unsigned, a malformed access key,
 * an unknown user, a wrong secret or a changed request, a disabled user.
 */
export async function authenticateRemoting(
  auth: RequestAuth,
  request: { extFields: Readonly<Record<string, string>>; body: Uint8Array | undefined },
): Promise<AclUser> {
  const accessKey = request.extFields[ACCESS_KEY_FIELD];
  const signature = request.extFields[SIGNATURE_FIELD];
  if (accessKey === undefined || signature === undefined)
    throw unauthenticated(
      "the request is not signed: this server checks RocketMQ's ACL signature (AclClientRPCHook with a user's keys)",
    );
  if (!USERNAME_PATTERN.test(accessKey)) throw unauthenticated("the access key is not a user name");
  if (signature.length > MAX_SIGNATURE_LENGTH) throw unauthenticated("the signature is not an HMAC-SHA1 in Base64");
  const given = Buffer.from(signature, "utf8");
  const content = signedContent(request.extFields, request.body);
  return auth.authenticateWith(accessKey, (secret) => {
    const expected = Buffer.from(remotingSignature(secret, content), "utf8");
    return expected.byteLength === given.byteLength && timingSafeEqual(expected, given);
  });
}
