/**
 * @module The auth gate of the request path shared by Lambda and the local server (handler.ts calls it):
 * `authenticate` checks a request's Nimbus signature (lib/core/request-signing.ts) against the user's stored
 * secret, or the configured root user's, and refuses a nonce seen before; `authorize` checks the endpoint's
 * declared permissions (lib/protocol endpoint `access`) against the user's ACL. Refusals are
 * UNAUTHENTICATED (401) and NO_PERMISSION (403), thrown before the route runs, so nothing is written.
 */

import { randomBytes } from "node:crypto";
import type { AclStore, StoredUser } from "../broker/security/index.js";
import {
  type Acl,
  type AclAction,
  type AclUser,
  decide,
  noPermission,
  type Permission,
  subjectOf,
  topicPermission,
  USERNAME_PATTERN,
} from "../core/acl.js";
import { BoundedMap } from "../core/bounded-map.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import {
  bodyMatchesClaim,
  NONCE_HEADER,
  parseSignature,
  type ReceivedRequest,
  signatureMatches,
} from "../core/request-signing.js";
import type { AnyEndpoint, EndpointInput } from "../protocol/index.js";
import type { ApiRequest } from "./api-types.js";
import { type DurableNonces, MAX_NONCES, ReplayGuard } from "./replay-guard.js";

/** A resource name the raw-body check reads: a name longer than any valid one is left to decoding. */
const MAX_RESOURCE_NAME = 255;
/** The most users (and as many ACLs) one process keeps read (`RequestAuth`'s caches). */
export const MAX_CACHED_USERS = 10_000;

export interface AuthOptions {
  store: AclStore;
  /** A Super user that is configured, not stored (`nimbus dev --auth --root-user`, the stage's root secret). */
  root?: { username: string; password: string } | undefined;
  /** How long a user and its ACL are trusted once read. Default 5 s (a change takes effect within it). */
  cacheMs?: number | undefined;
  /** The most users (and as many ACLs) kept read. Default MAX_CACHED_USERS. */
  maxCachedUsers?: number | undefined;
  now?: (() => number) | undefined;
  /** The nonces seen; pass one guard to every server of a process so none accepts another's request again. */
  replay?: ReplayGuard | undefined;
  /** The nonces of replay-proof routes, shared by every process of the stage (its ACL table). */
  nonces?: DurableNonces | undefined;
}

export class RequestAuth {
  readonly #options: AuthOptions;
  readonly #now: () => number;
  /**
   * Users and ACLs read within `cacheMs`, at most `maxCachedUsers` each: unknown names are cached too, so a stream of
   * made-up access keys would otherwise grow them without end; the one written longest ago goes first.
   */
  readonly #cache: BoundedMap<string, { at: number; user: StoredUser | undefined }>;
  readonly #acls: BoundedMap<string, { at: number; acl: Acl | undefined }>;
  readonly #replay: ReplayGuard;
  /** The secret an unknown user's signature is checked against (it never matches: nobody knows it). */
  readonly #decoy = randomBytes(24).toString("base64url");

  constructor(options: AuthOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    const cached = options.maxCachedUsers ?? MAX_CACHED_USERS;
    this.#cache = new BoundedMap(cached, { order: "written" });
    this.#acls = new BoundedMap(cached, { order: "written" });
    this.#replay = options.replay ?? new ReplayGuard(MAX_NONCES);
  }

  get store(): AclStore {
    return this.#options.store;
  }

  /**
   * The user who signed `request`, or UNAUTHENTICATED. `headersChecked`: `checkHeaders` passed for this very request
   * before its body was read, so the signature over its headers and the body's claimed hash is the user's; what is
   * left is that the body is the one claimed (one SHA-256, no second signing).
   */
  async authenticate(request: ReceivedRequest, headersChecked = false): Promise<AclUser> {
    const now = this.#now();
    const claim = parseSignature(request, now);
    const user = await this.#user(claim.accessKey, now);
    // The same refusal, and the same work (the HMAC with a decoy secret), for an unknown user and a wrong
    // signature: a caller can probe for user names neither by the answer nor by its time. (Within a few µs: a
    // signing key not kept yet, a user's first of the day, costs four HMACs more; the decoy's is kept.)
    const matches = headersChecked
      ? bodyMatchesClaim(request)
      : signatureMatches(request, claim, user?.secret ?? this.#decoy);
    const verified = this.#verified(user, matches);
    this.#replay.admit(`${claim.accessKey}/${claim.nonce}`, now);
    return verified;
  }

  /**
   * Records the nonce of an authenticated, authorized request of a replay-proof route (isReplayProof) in the store,
   * so that no other process accepts it again; UNAUTHENTICATED if one did. Called just before the route runs, so a
   * refused request writes nothing.
   */
  async admitEverywhere(request: ReceivedRequest, user: AclUser): Promise<void> {
    const nonce = request.header(NONCE_HEADER) ?? "";
    await this.#options.nonces?.admit(`${user.username}/${nonce}`, this.#now());
  }

  /**
   * The enabled user `accessKey` names if `matches` accepts its secret (another protocol's signature, as the
   * gRPC endpoint's MQv2-HMAC-SHA1), or UNAUTHENTICATED with the same refusal as a bad Nimbus signature.
   */
  async authenticateWith(accessKey: string, matches: (secret: string) => boolean): Promise<AclUser> {
    const user = await this.#user(accessKey, this.#now());
    // The decoy's work for an unknown name too, as for a Nimbus signature.
    return this.#verified(user, matches(user?.secret ?? this.#decoy));
  }

  /**
   * `user` if it signed (`matches`) and is enabled; else UNAUTHENTICATED, the same refusal for an unknown user
   * and a wrong signature, so that a caller can probe for user names neither by the answer nor by its time.
   */
  #verified(user: StoredUser | undefined, matches: boolean): StoredUser {
    if (!user || !matches)
      throw new NimbusError(
        ErrorCode.UNAUTHENTICATED,
        "the signature does not match (unknown access key, wrong secret, or a changed request)",
      );
    if (user.userStatus === "disable")
      throw new NimbusError(ErrorCode.UNAUTHENTICATED, `the user ${user.username} is disabled`);
    return user;
  }

  /**
   * UNAUTHENTICATED unless `request`'s signature headers are a known, enabled user's, checked before its body is
   * read (the body's hash is taken as claimed; `authenticate` compares it with the body and records the nonce).
   * An anonymous client cannot make the server hold a body for it.
   */
  async checkHeaders(request: ReceivedRequest): Promise<void> {
    const now = this.#now();
    const claim = parseSignature(request, now);
    const user = await this.#user(claim.accessKey, now);
    this.#verified(user, signatureMatches(request, claim, user?.secret ?? this.#decoy, true));
  }

  /** Whether `username` is the configured (not stored) root user's. */
  isRoot(username: string): boolean {
    return this.#options.root?.username === username;
  }

  /** Drops a user and its ACL from this process's cache at once (a change that went through this process). */
  forget(username: string): void {
    this.forgetFromElsewhere(username);
    this.onForget?.(username);
  }

  /** Told of every change made here, to tell the deployment's other processes (`nimbus dev --workers`). */
  onForget: ((username: string) => void) | undefined;

  /** Another process changed the user or its ACL: the next request reads them again. */
  forgetFromElsewhere(username: string): void {
    this.#cache.delete(username);
    this.#acls.delete(username);
  }

  /** The user's ACL, read at most once per `cacheMs` (absent ones too: an ACL only narrows what a user may do). */
  async #acl(username: string): Promise<Acl | undefined> {
    const now = this.#now();
    const ttl = this.#options.cacheMs ?? 5000;
    const cached = this.#acls.get(username);
    if (cached && now - cached.at < ttl) return cached.acl;
    const acl = await this.#options.store.acl(subjectOf(username));
    if (ttl > 0) this.#acls.set(username, { at: now, acl });
    return acl;
  }

  /** NO_PERMISSION naming the resource and action unless `user` may call `endpoint` with `input`. */
  async authorize(user: AclUser, endpoint: AnyEndpoint, input: EndpointInput<AnyEndpoint>): Promise<void> {
    if (user.userType === "Super") return;
    const access = endpoint.access;
    if (access === undefined || access === "super")
      throw new NimbusError(ErrorCode.NO_PERMISSION, `only a Super user may call ${endpoint.method} ${endpoint.path}`);
    await this.authorizePermissions(user, access(input));
  }

  /**
   * NO_PERMISSION, before the body is decoded, when `user` may not call `endpoint` at all (a Super user's
   * endpoint) or lacks a permission its rule names on the raw (parsed, undecoded) body. A body the rule cannot
   * read (not an object, a name that is not a string) passes here: decoding refuses it, `authorize` decides after.
   */
  async preauthorize(
    user: AclUser,
    endpoint: AnyEndpoint,
    raw: { params: unknown; query: unknown; body: unknown },
  ): Promise<void> {
    if (user.userType === "Super") return;
    const access = endpoint.access;
    if (access === undefined || access === "super")
      throw new NimbusError(ErrorCode.NO_PERMISSION, `only a Super user may call ${endpoint.method} ${endpoint.path}`);
    let needs: Permission[];
    try {
      needs = access(raw as EndpointInput<AnyEndpoint>);
    } catch {
      return;
    }
    if (!needs.every((p) => typeof p.resource.name === "string" && p.resource.name.length <= MAX_RESOURCE_NAME)) return;
    await this.authorizePermissions(user, needs);
  }

  /** NO_PERMISSION naming the resource and action unless `user` has every one of `needs` (a channel frame). */
  async authorizePermissions(user: AclUser, needs: readonly Permission[]): Promise<void> {
    if (user.userType === "Super") return;
    const decision = decide(user, await this.#acl(user.username), needs);
    if (!decision.allowed) throw noPermission(user.username, decision.missing, decision.denied);
  }

  /**
   * The user `username` as it is now (a connection's user, recorded when its connect was authenticated):
   * UNAUTHENTICATED if it was deleted or disabled since.
   */
  async userNamed(username: string): Promise<AclUser> {
    const user = await this.#user(username, this.#now());
    if (!user) throw new NimbusError(ErrorCode.UNAUTHENTICATED, `the user ${username} no longer exists`);
    if (user.userStatus === "disable")
      throw new NimbusError(ErrorCode.UNAUTHENTICATED, `the user ${username} is disabled`);
    return user;
  }

  /** NO_PERMISSION unless `user` has every one of `needs` (a check a route makes on what it found stored). */
  async require(user: AclUser, needs: readonly Permission[]): Promise<void> {
    if (user.userType === "Super") return;
    const decision = decide(user, await this.#acl(user.username), needs);
    if (!decision.allowed) throw noPermission(user.username, decision.missing, decision.denied);
  }

  /** Which of `topics` `user` has one of `actions` on (for listings filtered to what the caller may see). */
  async allowedTopics(user: AclUser, topics: readonly string[], actions: AclAction[]): Promise<Set<string>> {
    if (user.userType === "Super") return new Set(topics);
    const acl = await this.#acl(user.username);
    return new Set(topics.filter((t) => decide(user, acl, [topicPermission(t, ...actions)]).allowed));
  }

  /** The stored user; one whose secret cannot be opened is refused as unknown (the detail is logged here only). */
  async #storedUser(username: string): Promise<StoredUser | undefined> {
    try {
      return await this.#options.store.user(username);
    } catch (err) {
      if (!(err instanceof NimbusError) || err.code !== ErrorCode.DATA_CORRUPTED) throw err;
      console.error(`nimbus: refusing user ${username}: ${err.message}`);
      return undefined;
    }
  }

  async #user(username: string, now: number): Promise<StoredUser | undefined> {
    const root = this.#options.root;
    if (root && username === root.username)
      return { username, secret: root.password, userType: "Super", userStatus: "enable" };
    // No stored user has such a name (the ACL endpoints take USERNAME_PATTERN's): unknown, no read, nothing cached.
    if (!USERNAME_PATTERN.test(username)) return undefined;
    const cached = this.#cache.get(username);
    const ttl = this.#options.cacheMs ?? 5000;
    if (cached && now - cached.at < ttl) return cached.user;
    const user = await this.#storedUser(username);
    // Unknown users are cached too (a probe costs the same as a known name); creating a user through this
    // process forgets the entry, through another within `cacheMs`.
    if (ttl > 0) this.#cache.set(username, { at: now, user });
    return user;
  }
}

/** A request as the signature check reads it (the path and query as sent, the body's bytes). */
export function receivedRequest(req: ApiRequest): ReceivedRequest {
  return {
    method: req.method.toUpperCase(),
    host: req.header("host") ?? "",
    rawPath: req.path,
    // The handler reads `+` as a space (URLSearchParams); SigV4 reads it as a plus, as `%2B`. Signed as the
    // handler reads it, so `+` and `%2B` (which the handler tells apart) never share a signature.
    rawQueryString: (req.rawQuery ?? new URLSearchParams(req.query).toString()).replaceAll("+", "%20"),
    header: (name) => req.header(name),
    body: req.body ?? new Uint8Array(0),
  };
}
