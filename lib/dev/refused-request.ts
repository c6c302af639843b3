/**
 * @module The local server's answers to a request refused before its route ran: its signature headers are not
 * a user's (checked before the body is read), the in-flight cap is full, the body is too large or did not
 * arrive in time.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode, NimbusError } from "../core/errors.js";
import { type RequestAuth, receivedRequest } from "../http/authorize.js";
import { jsonAnswer } from "../http/request-handler.js";
import { HTTP_STATUS } from "../protocol/index.js";
import { BodyTooLargeError, toApiRequest, writeAnswer } from "./api-gateway-event.js";

/** UNAUTHENTICATED unless the request's signature headers are a known user's (`auth` absent: open server). */
export async function checkSignedHeaders(auth: RequestAuth | undefined, req: IncomingMessage): Promise<void> {
  await auth?.checkHeaders(receivedRequest(toApiRequest(req, Buffer.alloc(0))));
}

/**
 * Answers `err` for a request whose body was not (all) kept. A request refused before its body was read gets
 * its answer at once and its connection closed (the rest of the body is never read); a destroyed one (its body
 * did not arrive in time) gets nothing, its connection is gone.
 */
export function answerUnread(req: IncomingMessage, res: ServerResponse, err: unknown): void {
  if (req.socket.destroyed || res.writableEnded) return;
  const code =
    err instanceof NimbusError
      ? err.code
      : err instanceof BodyTooLargeError
        ? ErrorCode.MESSAGE_BODY_TOO_LARGE
        : ErrorCode.PARAMETER_ILLEGAL;
  if (!req.complete) res.setHeader("connection", "close");
  writeAnswer(res, jsonAnswer(HTTP_STATUS[code], { code, message: err instanceof Error ? err.message : String(err) }));
  if (!req.complete) req.resume();
}
