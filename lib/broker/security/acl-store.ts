/**
 * @module Users and ACLs in the stage's `acl` table (RocketMQ 5 keeps them in the broker's metadata):
 * users under `user` (sort key: name) with their secret sealed (secret-sealer.ts), ACLs under `acl`
 * (sort key: `User:<name>`). Every operation is one or two single-item requests; listings read one partition.
 */
import {
  type Acl,
  type AclAction,
  type AclEntry,
  type AclUser,
  type Decision,
  subjectOf,
  type UserStatus,
  type UserType,
} from "../../core/acl.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { sleep } from "../../core/sleep.js";
import type { Item, Table } from "../../storage/table.js";
import type { SecretSealer } from "./secret-sealer.js";

export { ACL_TABLE } from "../store/index.js";

const USERS = "user";
const ACLS = "acl";

export interface StoredUser extends AclUser {
  /** The plain secret, opened from its sealed form. */
  secret: string;
}

export interface AclChange {
  subject: string;
  resources: readonly string[];
  actions: readonly AclAction[];
  decision: Decision;
}

export class AclStore {
  constructor(
    private readonly table: Table,
    private readonly sealer: SecretSealer,
  ) {}

  async createUser(user: AclUser, secret: string): Promise<AclUser> {
    try {
      // Condition: no user of that name yet, so a create never overwrites another user's secret.
      await this.table.put(this.#userItem(user, secret), { condition: { exists: false } });
    } catch (err) {
      if (err instanceof NimbusError && err.code === ErrorCode.CONDITION_FAILED)
        throw new NimbusError(ErrorCode.CONDITION_FAILED, `the user ${user.username} exists already`);
      throw err;
    }
    return user;
  }

  async updateUser(
    username: string,
    change: { password?: string | undefined; userType?: UserType | undefined; userStatus?: UserStatus | undefined },
  ): Promise<AclUser> {
    for (let attempt = 1; ; attempt++) {
      const item = await this.table.get({ pk: USERS, sk: username }, { consistent: true });
      if (!item) throw notFound(`the user ${username} does not exist`);
      const current = userOf(item);
      const next: AclUser = {
        username,
        userType: change.userType ?? current.userType,
        userStatus: change.userStatus ?? current.userStatus,
      };
      const secret = change.password ?? this.sealer.open(username, String(item.secret));
      const version = Number(item.version ?? 0);
      try {
        // Condition: the user is still stored at the version read: a concurrent update is not overwritten, and
        // a user deleted meanwhile is not re-created.
        await this.table.put(
          { ...this.#userItem(next, secret), version: version + 1 },
          { condition: { versionIs: version } },
        );
        return next;
      } catch (err) {
        if (!(err instanceof NimbusError && err.code === ErrorCode.CONDITION_FAILED)) throw err;
        if (attempt >= MAX_ACL_ATTEMPTS) throw busy(`User:${username}`);
        await backOff(attempt);
      }
    }
  }

  async deleteUser(username: string): Promise<void> {
    if (!(await this.user(username))) throw notFound(`the user ${username} does not exist`);
    await this.table.delete({ pk: USERS, sk: username });
    await this.table.delete({ pk: ACLS, sk: subjectOf(username) });
  }

  /** The user with its opened secret, or undefined. */
  async user(username: string): Promise<StoredUser | undefined> {
    const item = await this.table.get({ pk: USERS, sk: username }, { consistent: true });
    if (!item) return undefined;
    return { ...userOf(item), secret: this.sealer.open(username, String(item.secret)) };
  }

  async listUsers(filter?: string): Promise<AclUser[]> {
    const items = await queryAll(this.table, USERS);
    return items.map(userOf).filter((u) => filter === undefined || u.username.includes(filter));
  }

  async acl(subject: string): Promise<Acl | undefined> {
    const item = await this.table.get({ pk: ACLS, sk: subject }, { consistent: true });
    return item ? aclOf(item) : undefined;
  }

  async listAcls(subjectFilter?: string, resourceFilter?: string): Promise<Acl[]> {
    const acls = (await queryAll(this.table, ACLS)).map(aclOf);
    return acls
      .filter((a) => subjectFilter === undefined || a.subject.includes(subjectFilter))
      .map((a) => ({
        ...a,
        entries: a.entries.filter((e) => resourceFilter === undefined || e.resource.includes(resourceFilter)),
      }))
      .filter((a) => resourceFilter === undefined || a.entries.length > 0);
  }

  /**
   * Sets `change.actions` with `change.decision` on each of its resources, replacing what the ACL said about
   * those resources; `mustExist` (updateAcl) refuses a subject without an ACL.
   */
  async applyAcl(change: AclChange, mustExist: boolean): Promise<Acl> {
    return this.#rewriteAcl(change.subject, (current) => {
      if (mustExist && !current) throw notFound(`${change.subject} has no ACL`);
      const kept = (current?.entries ?? []).filter((e) => !change.resources.includes(e.resource));
      const added: AclEntry[] = change.resources.map((resource) => ({
        resource,
        actions: [...change.actions],
        decision: change.decision,
      }));
      return [...kept, ...added];
    });
  }

  /**
   * Reads the subject's ACL, computes its next entries with `next`, and writes them only onto the version read
   * (a conditional put): two changes at once never lose one; the loser reads again and re-applies its change.
   */
  async #rewriteAcl(subject: string, next: (current: Acl | undefined) => AclEntry[]): Promise<Acl> {
    for (let attempt = 1; ; attempt++) {
      const item = await this.table.get({ pk: ACLS, sk: subject }, { consistent: true });
      const current = item ? aclOf(item) : undefined;
      const entries = next(current);
      const version = item ? Number(item.version ?? 0) : 0;
      try {
        // Condition: a new ACL is created only if none exists, and an existing one is replaced only at the
        // version read, so a concurrent change in between fails this put instead of being overwritten.
        await this.table.put(
          { pk: ACLS, sk: subject, entries: JSON.stringify(entries), version: version + 1 },
          { condition: item ? { versionIs: version } : { exists: false } },
        );
        return { subject, entries };
      } catch (err) {
        const lost = err instanceof NimbusError && err.code === ErrorCode.CONDITION_FAILED;
        if (!lost) throw err;
        if (attempt >= MAX_ACL_ATTEMPTS) throw busy(subject);
        await backOff(attempt);
      }
    }
  }

  /** Deletes the subject's ACL, or only its entries for `resource`. */
  async deleteAcl(subject: string, resource?: string): Promise<void> {
    const current = await this.acl(subject);
    if (!current) throw notFound(`${subject} has no ACL`);
    if (resource === undefined) return this.table.delete({ pk: ACLS, sk: subject });
    await this.#rewriteAcl(subject, (latest) => {
      if (!latest) throw notFound(`${subject} has no ACL`);
      const entries = latest.entries.filter((e) => e.resource !== resource);
      if (entries.length === latest.entries.length) throw notFound(`${subject} has no entry for ${resource}`);
      return entries;
    });
  }

  #userItem(user: AclUser, secret: string): Item {
    return {
      pk: USERS,
      sk: user.username,
      userType: user.userType,
      userStatus: user.userStatus,
      secret: this.sealer.seal(user.username, secret),
    };
  }
}

/** Tries of a contended ACL change before SYSTEM_BUSY (each loses only to another change that landed). */
const MAX_ACL_ATTEMPTS = 16;

/** A random wait before trying again, growing with the attempt (at most ~100 ms): losers do not retry in step. */
const backOff = (attempt: number) => sleep(Math.random() * Math.min(100, 5 * attempt));

const busy = (subject: string) =>
  new NimbusError(ErrorCode.SYSTEM_BUSY, `the ACL of ${subject} is being changed by others; retry`);

function notFound(message: string): NimbusError {
  return new NimbusError(ErrorCode.QUERY_NOT_FOUND, message);
}

function userOf(item: Item): AclUser {
  return {
    username: String(item.sk),
    userType: item.userType === "Super" ? "Super" : "Normal",
    userStatus: item.userStatus === "disable" ? "disable" : "enable",
  };
}

function aclOf(item: Item): Acl {
  return { subject: String(item.sk), entries: JSON.parse(String(item.entries)) as AclEntry[] };
}

async function queryAll(table: Table, pk: string): Promise<Item[]> {
  const items: Item[] = [];
  let startAfter: string | number | undefined;
  do {
    const page = await table.query(pk, { startAfter, consistent: true });
    items.push(...page.items);
    startAfter = page.lastSk;
  } while (startAfter !== undefined);
  return items;
}
