/**
 * @module User and ACL administration (RocketMQ 5's ACL 2.0: mqadmin createUser ... listAcl). Super users
 * only. A user's secret goes in (create, update) and never comes out.
 */
import { z } from "zod";
import { ACL_ACTIONS, DECISIONS, USER_STATUSES, USER_TYPES, USERNAME_PATTERN } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_LIST_ITEMS, MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { success } from "../fields.js";

export const username = z
  .string()
  .max(64)
  .regex(USERNAME_PATTERN, "a user name is 1 to 64 letters, digits, - and _")
  .meta({ description: "A user name: its access key" });
/** `User:<name>`. */
export const subject = z
  .string()
  .max(69)
  .regex(/^User:[a-zA-Z0-9_-]{1,64}$/, "a subject is User:<name>")
  .meta({ description: "User:<name>" });
export const resourcePattern = z
  .string()
  .max(262)
  .regex(
    /^(Cluster|Cluster:\*|(Topic|Group):(\*|[%|a-zA-Z0-9_-]{1,255}\*?))$/,
    "a resource is Topic:<name|prefix*|*>, Group:<name|prefix*|*> or Cluster",
  )
  .meta({ description: "Topic:<name|prefix*|*>, Group:<name|prefix*|*> or Cluster" });
// A secret is printable ASCII without blanks: it is typed into terminals and environment variables.
const password = z
  .string()
  .max(128)
  .regex(/^[!-~]{8,128}$/, "a password is 8 to 128 printable characters, no blanks");

export const UserInfoSchema = z
  .object({
    username: z.string().max(MAX_TEXT_LENGTH),
    userType: z.enum(USER_TYPES),
    userStatus: z.enum(USER_STATUSES),
  })
  .meta({ id: "UserInfo" });
export type UserInfo = z.output<typeof UserInfoSchema>;

export const AclEntrySchema = z
  .object({
    resource: resourcePattern,
    actions: z.array(z.enum(ACL_ACTIONS)).min(1).max(ACL_ACTIONS.length),
    decision: z.enum(DECISIONS),
  })
  .strict()
  .meta({ id: "AclEntry" });

export const AclInfoSchema = z
  .object({ subject: z.string().max(MAX_TEXT_LENGTH), entries: z.array(AclEntrySchema).max(MAX_LIST_ITEMS) })
  .meta({ id: "AclInfo" });
export type AclInfo = z.output<typeof AclInfoSchema>;

/** mqadmin createAcl/updateAcl's `-r resources -a actions -d decision` for one subject. */
export const AclChangeSchema = z
  .object({
    subject,
    resources: z.array(resourcePattern).min(1).max(100),
    actions: z.array(z.enum(ACL_ACTIONS)).min(1).max(ACL_ACTIONS.length),
    decision: z.enum(DECISIONS),
  })
  .strict()
  .meta({ id: "AclChange" });
export type AclChange = z.output<typeof AclChangeSchema>;

const ACL_ERRORS = [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.NO_PERMISSION];

export const createUser = endpoint({
  id: "createUser",
  method: "POST",
  path: "/acl/users",
  service: "Acl",
  summary: "Creates a user: its name is its access key, its password the secret it signs with (mqadmin createUser).",
  access: "super",
  body: z
    .object({
      username,
      password,
      userType: z.enum(USER_TYPES).optional(),
      userStatus: z.enum(USER_STATUSES).optional(),
    })
    .strict(),
  response: UserInfoSchema,
  errors: [...ACL_ERRORS, ErrorCode.CONDITION_FAILED],
});

export const updateUser = endpoint({
  id: "updateUser",
  method: "PUT",
  path: "/acl/users/{username}",
  service: "Acl",
  summary: "Changes a user's password, type or status (mqadmin updateUser).",
  access: "super",
  params: z.object({ username }),
  body: z
    .object({
      password: password.optional(),
      userType: z.enum(USER_TYPES).optional(),
      userStatus: z.enum(USER_STATUSES).optional(),
    })
    .strict(),
  response: UserInfoSchema,
  errors: [...ACL_ERRORS, ErrorCode.QUERY_NOT_FOUND],
});

export const deleteUser = endpoint({
  id: "deleteUser",
  method: "DELETE",
  path: "/acl/users/{username}",
  service: "Acl",
  summary: "Deletes a user and its ACL (mqadmin deleteUser).",
  access: "super",
  params: z.object({ username }),
  response: success,
  errors: [...ACL_ERRORS, ErrorCode.QUERY_NOT_FOUND],
});

export const getUser = endpoint({
  id: "getUser",
  method: "GET",
  path: "/acl/users/{username}",
  service: "Acl",
  summary: "A user's name, type and status; never its secret (mqadmin getUser).",
  access: "super",
  params: z.object({ username }),
  response: UserInfoSchema,
  errors: [...ACL_ERRORS, ErrorCode.QUERY_NOT_FOUND],
});

export const listUsers = endpoint({
  id: "listUsers",
  method: "GET",
  path: "/acl/users",
  service: "Acl",
  summary: "Every user, optionally those whose name contains `filter` (mqadmin listUser).",
  access: "super",
  query: z.object({ filter: z.string().max(64).optional() }).strict(),
  response: z.object({ users: z.array(UserInfoSchema).max(MAX_LIST_ITEMS) }),
  errors: ACL_ERRORS,
});

export const createAcl = endpoint({
  id: "createAcl",
  method: "POST",
  path: "/acl/acls",
  service: "Acl",
  summary: "Grants or denies actions on resources to a subject, adding to its ACL (mqadmin createAcl).",
  access: "super",
  body: AclChangeSchema,
  response: AclInfoSchema,
  errors: [...ACL_ERRORS, ErrorCode.QUERY_NOT_FOUND],
});

export const updateAcl = endpoint({
  id: "updateAcl",
  method: "PUT",
  path: "/acl/acls",
  service: "Acl",
  summary: "Replaces the entries of an existing ACL for the given resources (mqadmin updateAcl).",
  access: "super",
  body: AclChangeSchema,
  response: AclInfoSchema,
  errors: [...ACL_ERRORS, ErrorCode.QUERY_NOT_FOUND],
});

export const deleteAcl = endpoint({
  id: "deleteAcl",
  method: "DELETE",
  path: "/acl/acls/{subject}",
  service: "Acl",
  summary: "Deletes a subject's ACL, or only its entries for `resource` (mqadmin deleteAcl).",
  access: "super",
  params: z.object({ subject }),
  query: z.object({ resource: resourcePattern.optional() }).strict(),
  response: success,
  errors: [...ACL_ERRORS, ErrorCode.QUERY_NOT_FOUND],
});

export const getAcl = endpoint({
  id: "getAcl",
  method: "GET",
  path: "/acl/acls/{subject}",
  service: "Acl",
  summary: "A subject's ACL entries (mqadmin getAcl).",
  access: "super",
  params: z.object({ subject }),
  response: AclInfoSchema,
  errors: [...ACL_ERRORS, ErrorCode.QUERY_NOT_FOUND],
});

export const listAcls = endpoint({
  id: "listAcls",
  method: "GET",
  path: "/acl/acls",
  service: "Acl",
  summary:
    "Every ACL, optionally of subjects containing `subjectFilter` with a resource containing `resourceFilter` (mqadmin listAcl).",
  access: "super",
  query: z
    .object({ subjectFilter: z.string().max(80).optional(), resourceFilter: z.string().max(300).optional() })
    .strict(),
  response: z.object({ acls: z.array(AclInfoSchema).max(MAX_LIST_ITEMS) }),
  errors: ACL_ERRORS,
});
