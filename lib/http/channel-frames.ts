/**
 * @module What the broker does with one frame a client sent on the push channel: the same for the local
 * server's sockets and API Gateway's `$default` route. A frame that is not JSON or not one of
 * lib/protocol/push-channel.ts is answered with an `error` frame (`PARAMETER_ILLEGAL`) and writes nothing.
 */
import type { Broker } from "../broker/index.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import { ClientFrameSchema, type RegisterFrame, registerAccess, type ServerFrame } from "../protocol/index.js";
import type { RequestAuth } from "./authorize.js";
import { parseJsonBody } from "./json-body.js";

/**
 * Handles `text` from `connectionId`; the answer to post back, if any. With `auth` (a deployment that checks
 * signatures and ACLs) a registration is authorized as the user who signed the connect (`channel.connected`):
 * refused with NO_PERMISSION (UNAUTHENTICATED for a connection nobody signed), it writes nothing, so the
 * connection gets no hints and no members of what it named.
 */
export async function handleChannelFrame(
  broker: Broker,
  connectionId: string,
  text: string,
  auth?: RequestAuth,
): Promise<ServerFrame | undefined> {
  let json: unknown;
  try {
    // The HTTP API's JSON rules: no `__proto__`, the shape bounds, no lone surrogates.
    json = parseJsonBody(text);
  } catch (err) {
    const message = err instanceof NimbusError ? err.message : "a channel frame is a JSON object";
    return { type: "error", code: ErrorCode.PARAMETER_ILLEGAL, message: `bad channel frame: ${message}` };
  }
  const parsed = ClientFrameSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join(".") ?? "";
    return {
      type: "error",
      code: ErrorCode.PARAMETER_ILLEGAL,
      message: `bad channel frame${where ? ` at ${where}` : ""}: ${issue?.message ?? "invalid"}`,
    };
  }
  const frame = parsed.data;
  try {
    if (frame.type === "ping") {
      // A ping renews the registration; with none left (expired, removed) the client is asked for it again.
      return (await broker.channel.ping(connectionId)) ? undefined : { type: "register-again" };
    }
    if (auth !== undefined) await authorizeRegistration(broker, auth, connectionId, frame);
    await broker.channel.register(connectionId, frame);
    return { type: "registered", connectionId, queues: frame.queues.length };
  } catch (err) {
    if (err instanceof NimbusError) return { type: "error", code: err.code, message: err.message };
    // A fault of ours (the store): logged here, not told to the client in its own words.
    console.error("nimbus: push channel frame:", err);
    return { type: "error", code: ErrorCode.SYSTEM_ERROR, message: "internal error" };
  }
}

async function authorizeRegistration(
  broker: Broker,
  auth: RequestAuth,
  connectionId: string,
  frame: RegisterFrame,
): Promise<void> {
  const username = await broker.channel.userOf(connectionId);
  if (username === undefined) throw new NimbusError(ErrorCode.UNAUTHENTICATED, "the channel's connect was not signed");
  await auth.authorizePermissions(await auth.userNamed(username), registerAccess(frame));
}
