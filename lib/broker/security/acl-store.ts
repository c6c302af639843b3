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
    const current = await this.user(username);
    if (!current) throw notFound(`the user ${username} does not exist`);
    const next: AclUser = {
      username,
      userType: change.userType ?? current.userType,
      userStatus: change.userStatus ?? current.userStatus,
    };
    await this.table.put(this.#userItem(next, change.password ?? current.secret));
    return next;
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
    const current = await this.acl(change.subject);
    if (mustExist && !current) throw notFound(`${change.subject} has no ACL`);
    const kept = (current?.entries ?? []).filter((e) => !change.resources.includes(e.resource));
    const added: AclEntry[] = change.resources.map((resource) => ({
      resource,
      actions: [...change.actions],
      decision: change.decision,
    }));
    const acl: Acl = { subject: change.subject, entries: [...kept, ...added] };
    await this.table.put({ pk: ACLS, sk: acl.subject, entries: JSON.stringify(acl.entries) });
    return acl;
  }

  /** Deletes the subject's ACL, or only its entries for `resource`. */
  async deleteAcl(subject: string, resource?: string): Promise<void> {
    const current = await this.acl(subject);
    if (!current) throw notFound(`${subject} has no ACL`);
    if (resource === undefined) return this.table.delete({ pk: ACLS, sk: subject });
    const entries = current.entries.filter((e) => e.resource !== resource);
    if (entries.length === current.entries.length) throw notFound(`${subject} has no entry for ${resource}`);
    await this.table.put({ pk: ACLS, sk: subject, entries: JSON.stringify(entries) });
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
