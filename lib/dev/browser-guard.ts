/**
 * @module What keeps web pages away from an open local broker (no `--auth`, loopback only). A page of another
 * origin may not call it: browsers send `Origin` on cross-origin requests, even on the "simple" `text/plain`
 * POSTs that skip a CORS preflight, so such a request is refused before its body is read. A page that reaches it
 * by DNS rebinding carries its own name in `Host`, so a server bound to loopback answers only loopback names.
 * The SDK, the CLI and curl send no `Origin`; the console served at `/console` is of the server's own origin.
 * With `--auth`, signatures decide instead (a page has no secret to sign with).
 */
import type { IncomingMessage } from "node:http";
import { ErrorCode, NimbusError } from "../core/errors.js";
import { isLoopback } from "./server-guard.js";

const LOOPBACK_ORIGIN = /^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/i;

/** Whether `origin` is a page served from this machine's loopback (the console, a local tool). */
export const isLoopbackOrigin = (origin: string): boolean => LOOPBACK_ORIGIN.test(origin);

/** The host name of a `Host` header (`name:port`, `[v6]:port`). */
function hostName(host: string): string {
  const v6 = /^\[([^\]]*)\]/.exec(host);
  return v6 ? `[${v6[1]}]` : (host.split(":")[0] ?? "");
}

/** NO_PERMISSION for a browser page of another origin, or a request naming a non-loopback host (DNS rebinding). */
export function refuseForeignPage(req: IncomingMessage, boundToLoopback: boolean): void {
  const origin = req.headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin)) {
    throw new NimbusError(
      ErrorCode.NO_PERMISSION,
      `a page of origin ${origin} may not call the open local broker (start it with --auth)`,
    );
  }
  const host = req.headers.host;
  if (boundToLoopback && host !== undefined && !isLoopback(hostName(host))) {
    throw new NimbusError(ErrorCode.NO_PERMISSION, `the local broker answers loopback names only, not ${host}`);
  }
}
