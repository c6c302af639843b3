/**
 * @module Who may open the push channel on the local server, decided on the WebSocket upgrade request
 * before any frame is read: a browser page of another origin never (it must not reach a developer's local
 * broker), and, when the server checks auth (`nimbus dev --auth`), only a request signed as the HTTP API's
 * requests are (lib/http/authorize.ts `authenticate`: SigV4 service `nimbus`, the nonce header). A refusal
 * carries the API's `{code, message}` and status (401 UNAUTHENTICATED for a missing or bad signature).
 */
import type { IncomingMessage } from "node:http";
import type { AclUser } from "../core/acl.js";
import { ErrorCode, NimbusError } from "../core/errors.js";
import type { RequestAuth } from "../http/authorize.js";
import { HTTP_STATUS } from "../protocol/index.js";
import { isLoopbackOrigin, refuseForeignPage } from "./browser-guard.js";

export type ChannelAuthResult =
  | { ok: true; user: AclUser | undefined }
  | { ok: false; status: number; code: ErrorCode; message: string };

const refusal = (code: ErrorCode, message: string): ChannelAuthResult => ({
  ok: false,
  status: HTTP_STATUS[code],
  code,
  message,
});

/** Decides on the WebSocket upgrade request of the channel; the signing user when `auth` is on. */
export async function authorizeChannel(
  req: IncomingMessage,
  auth: RequestAuth | undefined,
  boundToLoopback = true,
): Promise<ChannelAuthResult> {
  const origin = req.headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin))
    return refusal(ErrorCode.NO_PERMISSION, `origin ${origin} may not open the channel`);
  if (auth === undefined) {
    // The HTTP API's rule for an open broker: a loopback server answers loopback names only (DNS rebinding).
    try {
      refuseForeignPage(req, boundToLoopback);
    } catch (err) {
      if (err instanceof NimbusError) return refusal(err.code, err.message);
      throw err;
    }
    return { ok: true, user: undefined };
  }
  const target = req.url ?? "/";
  const q = target.indexOf("?");
  try {
    const user = await auth.authenticate({
      method: req.method ?? "GET",
      host: req.headers.host ?? "",
      rawPath: q < 0 ? target : target.slice(0, q),
      rawQueryString: q < 0 ? "" : target.slice(q + 1),
      header: (name) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v.join(",") : v;
      },
      body: new Uint8Array(0),
    });
    return { ok: true, user };
  } catch (err) {
    if (err instanceof NimbusError) return refusal(err.code, err.message);
    throw err;
  }
}
