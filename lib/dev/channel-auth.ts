/**
 * @module Who may open the push channel on the local server: the one place that decides, so that request
 * authentication (docs/push-channel.md) extends it together with the HTTP API's. The local server's HTTP API
 * asks for no credentials today, so neither does its channel; on AWS, API Gateway checks the connect request
 * itself (IAM/SigV4 on `$connect` where the stage asks for it, as on the HTTP routes).
 */
import type { IncomingMessage } from "node:http";
import { ErrorCode } from "../core/errors.js";
import { HTTP_STATUS } from "../protocol/index.js";

export type ChannelAuthResult = { ok: true } | { ok: false; status: number; code: ErrorCode; message: string };

/** Decides on the WebSocket upgrade request of the channel, before any frame is read. */
export function authorizeChannel(req: IncomingMessage): ChannelAuthResult {
  const origin = req.headers.origin;
  // Browsers send an Origin; a page of another site must not reach a developer's local broker.
  if (origin !== undefined && !/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(origin)) {
    const code = ErrorCode.NO_PERMISSION;
    return { ok: false, status: HTTP_STATUS[code], code, message: `origin ${origin} may not open the channel` };
  }
  return { ok: true };
}
