/** @module User and ACL administration routes (Super users only, as the endpoints declare). */
import type { AclStore } from "../../broker/security/index.js";
import { usernameOfSubject } from "../../core/acl.js";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import { endpoints } from "../../protocol/index.js";
import type { HandlerContext } from "../context.js";
import { route, serviceRoutes } from "../route.js";

/** The store of a server with auth on; without auth there is no master key to seal secrets with. */
function storeOf(ctx: HandlerContext): AclStore {
  if (!ctx.auth)
    throw new NimbusError(
      ErrorCode.NO_PERMISSION,
      "users and ACLs need auth on (nimbus dev --auth, or a stage that is not public)",
    );
  return ctx.auth.store;
}

export const aclRoutes = serviceRoutes<HandlerContext>("Acl", [
  route(endpoints.createUser, async ({ body }, ctx) => {
    // The configured root is matched before stored users: a stored namesake could never sign in, yet be listed.
    if (ctx.auth?.isRoot(body.username))
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `${body.username} is the configured root user's name`);
    const user = await storeOf(ctx).createUser(
      { username: body.username, userType: body.userType ?? "Normal", userStatus: body.userStatus ?? "enable" },
      body.password,
    );
    ctx.auth?.forget(body.username);
    return user;
  }),
  route(endpoints.updateUser, async ({ params, body }, ctx) => {
    const user = await storeOf(ctx).updateUser(params.username, body);
    ctx.auth?.forget(params.username);
    return user;
  }),
  route(endpoints.deleteUser, async ({ params }, ctx) => {
    await storeOf(ctx).deleteUser(params.username);
    ctx.auth?.forget(params.username);
    return { code: "SUCCESS" as const };
  }),
  route(endpoints.getUser, async ({ params }, ctx) => {
    const user = await storeOf(ctx).user(params.username);
    if (!user) throw new NimbusError(ErrorCode.QUERY_NOT_FOUND, `the user ${params.username} does not exist`);
    return { username: user.username, userType: user.userType, userStatus: user.userStatus };
  }),
  route(endpoints.listUsers, async ({ query }, ctx) => ({ users: await storeOf(ctx).listUsers(query.filter) })),
  route(endpoints.createAcl, async ({ body }, ctx) => {
    const store = storeOf(ctx);
    const username = usernameOfSubject(body.subject);
    if (!(await store.user(username)))
      throw new NimbusError(ErrorCode.QUERY_NOT_FOUND, `the user ${username} does not exist`);
    const acl = await store.applyAcl(body, false);
    ctx.auth?.forget(username);
    return acl;
  }),
  route(endpoints.updateAcl, async ({ body }, ctx) => {
    const acl = await storeOf(ctx).applyAcl(body, true);
    ctx.auth?.forget(usernameOfSubject(body.subject));
    return acl;
  }),
  route(endpoints.deleteAcl, async ({ params, query }, ctx) => {
    await storeOf(ctx).deleteAcl(params.subject, query.resource);
    ctx.auth?.forget(usernameOfSubject(params.subject));
    return { code: "SUCCESS" as const };
  }),
  route(endpoints.getAcl, async ({ params }, ctx) => {
    const acl = await storeOf(ctx).acl(params.subject);
    if (!acl) throw new NimbusError(ErrorCode.QUERY_NOT_FOUND, `${params.subject} has no ACL`);
    return { subject: acl.subject, entries: acl.entries.map((e) => ({ ...e, actions: [...e.actions] })) };
  }),
  route(endpoints.listAcls, async ({ query }, ctx) => ({
    acls: (await storeOf(ctx).listAcls(query.subjectFilter, query.resourceFilter)).map((a) => ({
      subject: a.subject,
      entries: a.entries.map((e) => ({ ...e, actions: [...e.actions] })),
    })),
  })),
]);
