/**
 * @module RocketMQ 5's ACL 2.0 model, pure: users (an access key and a secret, `Super` or `Normal`), and per
 * subject `User:<name>` a list of policy entries: resources (`Topic:<name|prefix*|*>`, `Group:<...>`,
 * `Cluster`) × actions (`Pub`, `Sub`, `Create`, `Update`, `Delete`, `Get`, `List`) × `Allow` or `Deny`.
 * A request needs every one of its permissions; a permission is granted when some entry allows it and no
 * entry denies it (Deny wins), and refused when no entry matches (default deny). Super users may do anything.
 *
 * @example
 * const acl: Acl = { subject: "User:alice", entries: [
 *   { resource: "Topic:orders-*", actions: ["Pub"], decision: "Allow" },
 *   { resource: "Topic:orders-secret", actions: ["Pub"], decision: "Deny" },
 * ] };
 * decide(user, acl, { resource: { type: "Topic", name: "orders-eu" }, actions: ["Pub"] }); // { allowed: true }
 */
import { ErrorCode, NimbusError } from "./errors.js";
import { DLQ_GROUP_TOPIC_PREFIX, isDlqTopic, isRetryTopic, RETRY_GROUP_TOPIC_PREFIX } from "./names.js";

export const ACL_ACTIONS = ["Pub", "Sub", "Create", "Update", "Delete", "Get", "List"] as const;
export type AclAction = (typeof ACL_ACTIONS)[number];
export const RESOURCE_TYPES = ["Topic", "Group", "Cluster"] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
export const DECISIONS = ["Allow", "Deny"] as const;
export type Decision = (typeof DECISIONS)[number];
export const USER_TYPES = ["Super", "Normal"] as const;
export type UserType = (typeof USER_TYPES)[number];
export const USER_STATUSES = ["enable", "disable"] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** A concrete resource a request touches: a topic, a group, or the cluster. */
export interface Resource {
  type: ResourceType;
  /** The topic or group name; empty for the cluster. */
  name: string;
}

/**
 * What a request needs on one resource: one of `actions` (usually one; a route lookup takes any of
 * Pub, Sub or Get, as producers and consumers both need it).
 */
export interface Permission {
  resource: Resource;
  actions: readonly AclAction[];
}

export interface AclEntry {
  /** `Topic:orders`, `Topic:orders-*` (a prefix), `Topic:*`, `Group:...`, `Cluster`. */
  resource: string;
  actions: AclAction[];
  decision: Decision;
}

export interface Acl {
  /** `User:<name>`. */
  subject: string;
  entries: AclEntry[];
}

export interface AclUser {
  username: string;
  userType: UserType;
  userStatus: UserStatus;
}

/** The limit of an access key (a user name), as RocketMQ's. */
export const USERNAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** `"Topic:orders"`, `"Group:g1"`, `"Cluster"`: how a resource is named in ACLs and messages. */
export function formatResource(r: Resource): string {
  return r.type === "Cluster" ? "Cluster" : `${r.type}:${r.name}`;
}

/** `User:<name>` of a user name. */
export const subjectOf = (username: string): string => `User:${username}`;

/** The user name of a `User:<name>` subject, or PARAMETER_ILLEGAL. */
export function usernameOfSubject(subject: string): string {
  const name = /^User:(.+)$/.exec(subject)?.[1];
  if (name === undefined || !USERNAME_PATTERN.test(name))
    throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `a subject is User:<name>, not ${JSON.stringify(subject)}`);
  return name;
}

/** Checks an ACL resource pattern (`Topic:<name|prefix*|*>`, `Group:<...>`, `Cluster`); PARAMETER_ILLEGAL otherwise. */
export function validateResourcePattern(pattern: string): void {
  if (pattern === "Cluster" || pattern === "Cluster:*") return;
  const m = /^(Topic|Group):(.+)$/.exec(pattern);
  const name = m?.[2];
  if (name === undefined || !/^(\*|[%|a-zA-Z0-9_-]{1,255}\*?)$/.test(name))
    throw new NimbusError(
      ErrorCode.PARAMETER_ILLEGAL,
      `a resource is Topic:<name|prefix*|*>, Group:<name|prefix*|*> or Cluster, not ${JSON.stringify(pattern)}`,
    );
}

/** Whether an ACL resource pattern covers a concrete resource. */
export function resourceMatches(pattern: string, resource: Resource): boolean {
  if (pattern === "Cluster" || pattern === "Cluster:*") return resource.type === "Cluster";
  const colon = pattern.indexOf(":");
  if (pattern.slice(0, colon) !== resource.type) return false;
  const name = pattern.slice(colon + 1);
  if (name === "*") return true;
  return name.endsWith("*") ? resource.name.startsWith(name.slice(0, -1)) : resource.name === name;
}

export type AccessDecision = { allowed: true } | { allowed: false; missing: Permission; denied: boolean };

/**
 * Whether `user` with `acl` may do everything `needs` lists. Super users may; a disabled user may not (the
 * authenticator refuses disabled users earlier). The first permission refused is the one reported.
 */
export function decide(user: AclUser, acl: Acl | undefined, needs: readonly Permission[]): AccessDecision {
  if (user.userType === "Super") return { allowed: true };
  for (const need of needs) {
    const matching = (acl?.entries ?? []).filter((e) => resourceMatches(e.resource, need.resource));
    const hits = matching.filter((e) => e.actions.some((a) => need.actions.includes(a)));
    // Deny wins: one deny among the matching entries refuses, whatever allows it.
    const denied = hits.some((e) => e.decision === "Deny");
    if (denied || !hits.some((e) => e.decision === "Allow")) return { allowed: false, missing: need, denied };
  }
  return { allowed: true };
}

/** The NO_PERMISSION error naming the subject, the resource and the action(s) refused. */
export function noPermission(username: string, refused: Permission, denied: boolean): NimbusError {
  const actions = refused.actions.join("|");
  return new NimbusError(
    ErrorCode.NO_PERMISSION,
    `${subjectOf(username)} has no ${actions} permission on ${formatResource(refused.resource)}` +
      (denied ? " (an ACL entry denies it)" : ""),
  );
}

/** Helpers for endpoint declarations: `topic("orders", "Pub")`. */
/**
 * A topic's resource. A group's retry and dead-letter topics (`%RETRY%G`, `%DLQ%G`) are the group's own, as in
 * RocketMQ 5: pulling, sending back or reading them is decided by the ACL of `Group:G`.
 */
export const topicPermission = (name: string, ...actions: AclAction[]): Permission => {
  const group = groupOfTopic(name);
  return group === undefined
    ? { resource: { type: "Topic", name }, actions }
    : { resource: { type: "Group", name: group }, actions };
};
const groupOfTopic = (topic: string): string | undefined =>
  isRetryTopic(topic)
    ? topic.slice(RETRY_GROUP_TOPIC_PREFIX.length)
    : isDlqTopic(topic)
      ? topic.slice(DLQ_GROUP_TOPIC_PREFIX.length)
      : undefined;
export const groupPermission = (name: string, ...actions: AclAction[]): Permission => ({
  resource: { type: "Group", name },
  actions,
});
export const clusterPermission = (...actions: AclAction[]): Permission => ({
  resource: { type: "Cluster", name: "" },
  actions,
});
/** What reading a topic's messages for a consumer group needs (pull, send-back): `Sub` on the topic, then the group. */
export const consumePermissions = (body: { topic: string; consumerGroup: string }): Permission[] => [
  topicPermission(body.topic, "Sub"),
  groupPermission(body.consumerGroup, "Sub"),
];
