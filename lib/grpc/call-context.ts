/**
 * @module Who calls: the headers RocketMQ 5's clients put on every call (`x-mq-client-id`, `x-mq-date-time`,
 * `authorization: MQv2-HMAC-SHA1 Credential=<access key>, SignedHeaders=x-mq-date-time, Signature=<hex>`),
 * checked once per call. With auth on, the signature is the HMAC-SHA1 of the date-time under the user's
 * secret (a Nimbus user: the access key is its name), the date-time within 5 minutes of the server's clock, the
 * signature first accepted at most a minute ago (signature-reuse.ts); then each RPC asks for the permissions of
 * its HTTP counterpart (access.ts) of that user's ACL.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Broker } from "../broker/index.js";
import { type AclUser, type Permission, USERNAME_PATTERN } from "../core/acl.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import type { RequestAuth } from "../http/authorize.js";
import { Refused } from "./codes.js";
import type { CallMetadata } from "./grpc-call.js";
import { GRPC_SIGNATURE_SKEW_MS, type SignatureReuse } from "./signature-reuse.js";
import { clientIdHeader } from "./wire.js";

export interface CallContext {
  readonly broker: Broker;
  /** `x-mq-client-id`, when the call carries a well-formed one. */
  readonly clientId: string | undefined;
  /** The signed-in user (auth on), or undefined (auth off: every call is allowed). */
  readonly user: AclUser | undefined;
  /** NO_PERMISSION unless the caller has every one of `needs` (nothing to check with auth off). */
  authorize(needs: readonly Permission[]): Promise<void>;
  /** The client id, or CLIENT_ID_REQUIRED. */
  requireClientId(): string;
}

const unauthenticated = (message: string) => new NimbusError(ErrorCode.UNAUTHENTICATED, message);

/** `yyyyMMddTHHmmssZ` (UTC) as ms since the epoch, or NaN. */
export function parseMqDateTime(text: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!m) return Number.NaN;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

/** The signature of `dateTime` under `secret`, as the clients compute it (upper-case hex HMAC-SHA1). */
export const mqSignature = (secret: string, dateTime: string): string =>
  createHmac("sha1", secret).update(dateTime, "utf8").digest("hex").toUpperCase();

const header = (md: CallMetadata, name: string): string | undefined => {
  const [value] = md.get(name);
  return typeof value === "string" && value.length <= 1024 ? value : undefined;
};

/**
 * The user who signed a call, or UNAUTHENTICATED (missing, malformed, stale, a wrong signature, or one `reuse`
 * first accepted too long ago).
 */
export async function authenticate(
  md: CallMetadata,
  auth: RequestAuth,
  now: number,
  reuse?: SignatureReuse,
): Promise<AclUser> {
  const authorization = header(md, "authorization");
  if (authorization === undefined) throw unauthenticated("the call is not signed (no authorization header)");
  const m = /^MQv2-HMAC-SHA1 Credential=([^,\s]+), ?SignedHeaders=x-mq-date-time, ?Signature=([0-9A-Fa-f]{40})$/.exec(
    authorization,
  );
  if (!m) throw unauthenticated("the authorization header is not MQv2-HMAC-SHA1 over x-mq-date-time");
  const [, accessKey = "", signature = ""] = m;
  if (!USERNAME_PATTERN.test(accessKey)) throw unauthenticated("the access key is not a user name");
  const dateTime = header(md, "x-mq-date-time") ?? "";
  const signedAt = parseMqDateTime(dateTime);
  if (!Number.isFinite(signedAt) || Math.abs(now - signedAt) > GRPC_SIGNATURE_SKEW_MS)
    throw unauthenticated(`x-mq-date-time is missing or more than ${GRPC_SIGNATURE_SKEW_MS / 60_000} minutes off`);
  const given = Buffer.from(signature.toUpperCase(), "utf8");
  const user = await auth.authenticateWith(accessKey, (secret) => {
    const expected = Buffer.from(mqSignature(secret, dateTime), "utf8");
    return expected.byteLength === given.byteLength && timingSafeEqual(expected, given);
  });
  // Only a valid signature is recorded: a forged one must not start the clock of the real one.
  reuse?.admit(`${accessKey}\n${dateTime}`, now);
  return user;
}

/** The context of one call: its client id, and its user when auth is on. */
export async function callContext(
  broker: Broker,
  md: CallMetadata,
  auth: RequestAuth | undefined,
  reuse?: SignatureReuse,
): Promise<CallContext> {
  const parsed = clientIdHeader.safeParse(header(md, "x-mq-client-id"));
  const clientId = parsed.success ? parsed.data : undefined;
  const user = auth === undefined ? undefined : await authenticate(md, auth, broker.now(), reuse);
  return {
    broker,
    clientId,
    user,
    authorize: async (needs) => {
      if (auth !== undefined && user !== undefined) await auth.authorizePermissions(user, needs);
    },
    requireClientId: () => {
      if (clientId === undefined)
        throw new Refused("CLIENT_ID_REQUIRED", "the call has no valid x-mq-client-id header");
      return clientId;
    },
  };
}
