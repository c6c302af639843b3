/**
 * @module mqadmin's ACL 2.0 commands: `createUser`, `updateUser`, `deleteUser`, `getUser`, `listUser`,
 * `createAcl`, `updateAcl`, `deleteAcl`, `getAcl`, `listAcl`, with mqadmin's option letters (-u user, -p
 * password, -t userType, -s userStatus or subject, -f filter, -r resources, -a actions, -d decision).
 * They need a Super user's keys (NIMBUS_ACCESS_KEY / NIMBUS_SECRET_KEY).
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import { ACL_ACTIONS, type AclAction, DECISIONS, USER_STATUSES, USER_TYPES } from "../core/acl.js";
import { type AclInfo, endpoints, type UserInfo } from "../protocol/index.js";
import { type ApiOptions, apiCommand, connect } from "./common.js";
import { clusterOption, refuseOptions, STAGE_WIDE_BROKER } from "./mqadmin-compat.js";
import { formatTable, print, printJson } from "./output.js";

interface UserOptions extends ApiOptions {
  username: string;
  password?: string;
  userType?: (typeof USER_TYPES)[number];
  userStatus?: (typeof USER_STATUSES)[number];
}

interface AclOptions extends ApiOptions {
  subject: string;
  resources: string[];
  actions: AclAction[];
  decision: (typeof DECISIONS)[number];
}

const list = (value: string): string[] =>
  value
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v.length > 0);

function actionList(value: string): AclAction[] {
  const actions = list(value);
  const bad = actions.filter((a) => !(ACL_ACTIONS as readonly string[]).includes(a));
  if (actions.length === 0 || bad.length > 0)
    throw new InvalidArgumentError(`actions are a comma-separated list of ${ACL_ACTIONS.join(", ")}`);
  return actions as AclAction[];
}

const userType = () => new Option("-t, --userType <type>", "Super or Normal").choices(USER_TYPES);
/** mqadmin's `-b <brokerAddr>` and `-c <clusterName>` on every user and ACL command. */
function aclCommand(program: Command, name: string, description: string): Command {
  return clusterOption(
    refuseOptions(apiCommand(program, name, description), [
      { flags: "-b, --brokerAddr <addr>", hint: STAGE_WIDE_BROKER },
    ]),
    "checked; users and ACLs are stage-wide in Nimbus",
  );
}

const SOURCE_IP = {
  flags: "-i, --sourceIp <ips>",
  hint: "Nimbus's ACLs have no source-IP condition: limit who reaches the stage's API instead (docs/security.md)",
};
const password = "password: the user's secret key (8 to 128 printable characters)";

export function addAclCommands(program: Command): void {
  aclCommand(program, "createUser", "create a user: its name is its access key, its password its secret key")
    .requiredOption("-u, --username <name>", "user name")
    .requiredOption("-p, --password <password>", password)
    .addOption(userType().default("Normal"))
    .action(async (o: UserOptions) => {
      const body = { username: o.username, password: o.password ?? "", ...(o.userType && { userType: o.userType }) };
      printUser(o, await connect(o).call(endpoints.createUser, { body }));
    });

  aclCommand(program, "updateUser", "change a user's password, type or status")
    .requiredOption("-u, --username <name>", "user name")
    .option("-p, --password <password>", password)
    .addOption(userType())
    .addOption(new Option("-s, --userStatus <status>", "enable or disable").choices(USER_STATUSES))
    .action(async (o: UserOptions) => {
      const body = {
        ...(o.password !== undefined && { password: o.password }),
        ...(o.userType && { userType: o.userType }),
        ...(o.userStatus && { userStatus: o.userStatus }),
      };
      printUser(o, await connect(o).call(endpoints.updateUser, { params: { username: o.username }, body }));
    });

  aclCommand(program, "deleteUser", "delete a user and its ACL")
    .requiredOption("-u, --username <name>", "user name")
    .action(async (o: UserOptions) => {
      await connect(o).call(endpoints.deleteUser, { params: { username: o.username } });
      if (o.json) printJson({ code: "SUCCESS" });
      else print(`delete user ${o.username} success.\n`);
    });

  aclCommand(program, "getUser", "show a user (never its secret)")
    .requiredOption("-u, --username <name>", "user name")
    .action(async (o: UserOptions) =>
      printUser(o, await connect(o).call(endpoints.getUser, { params: { username: o.username } })),
    );

  aclCommand(program, "listUser", "list the users")
    .option("-f, --filter <text>", "only users whose name contains this")
    .action(async (o: ApiOptions & { filter?: string }) => {
      const { users } = await connect(o).call(endpoints.listUsers, { query: { filter: o.filter } });
      if (o.json) return printJson(users);
      print(userTable(users));
    });

  for (const [name, description] of [
    ["createAcl", "grant (Allow) or deny actions on resources to a subject, adding to its ACL"],
    ["updateAcl", "replace an existing ACL's entries for these resources"],
  ] as const) {
    refuseOptions(aclCommand(program, name, description), [SOURCE_IP])
      .requiredOption("-s, --subject <subject>", "User:<name>")
      .requiredOption("-r, --resources <list>", "Topic:<name|prefix*|*>, Group:<...>, Cluster; comma-separated", list)
      .requiredOption("-a, --actions <list>", `${ACL_ACTIONS.join(",")}; comma-separated`, actionList)
      .addOption(new Option("-d, --decision <decision>", "Allow or Deny").choices(DECISIONS).default("Allow"))
      .action(async (o: AclOptions) => {
        const body = { subject: o.subject, resources: o.resources, actions: o.actions, decision: o.decision };
        printAcl(o, await connect(o).call(name === "createAcl" ? endpoints.createAcl : endpoints.updateAcl, { body }));
      });
  }

  aclCommand(program, "deleteAcl", "delete a subject's ACL, or its entries for one resource")
    .requiredOption("-s, --subject <subject>", "User:<name>")
    .option("-r, --resources <resource>", "only the entries of this resource")
    .action(async (o: ApiOptions & { subject: string; resources?: string }) => {
      await connect(o).call(endpoints.deleteAcl, { params: { subject: o.subject }, query: { resource: o.resources } });
      if (o.json) printJson({ code: "SUCCESS" });
      else print(`delete acl of ${o.subject} success.\n`);
    });

  aclCommand(program, "getAcl", "show a subject's ACL")
    .requiredOption("-s, --subject <subject>", "User:<name>")
    .action(async (o: ApiOptions & { subject: string }) =>
      printAcl(o, await connect(o).call(endpoints.getAcl, { params: { subject: o.subject } })),
    );

  aclCommand(program, "listAcl", "list the ACLs")
    .option("-s, --subject <text>", "only subjects containing this")
    .option("-r, --resource <text>", "only entries whose resource contains this")
    .action(async (o: ApiOptions & { subject?: string; resource?: string }) => {
      const { acls } = await connect(o).call(endpoints.listAcls, {
        query: { subjectFilter: o.subject, resourceFilter: o.resource },
      });
      if (o.json) return printJson(acls);
      print(aclTable(acls));
    });
}

function userTable(users: UserInfo[]): string {
  return formatTable(
    [{ header: "UserName" }, { header: "UserType" }, { header: "UserStatus" }],
    users.map((u) => [u.username, u.userType, u.userStatus]),
  );
}

function printUser(o: ApiOptions, user: UserInfo): void {
  if (o.json) printJson(user);
  else print(userTable([user]));
}

function aclTable(acls: AclInfo[]): string {
  return formatTable(
    [{ header: "Subject" }, { header: "Resource" }, { header: "Actions" }, { header: "Decision" }],
    acls.flatMap((a) => a.entries.map((e) => [a.subject, e.resource, e.actions.join(","), e.decision])),
  );
}

function printAcl(o: ApiOptions, acl: AclInfo): void {
  if (o.json) printJson(acl);
  else print(aclTable([acl]));
}
