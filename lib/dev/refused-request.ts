/**
 * @module The local server's answers to a request refused before its route ran: its signature headers are not
 * a user's (checked before the body is read), the in-flight cap is full, the body is too large or did not
 * arrive in time.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode } from "../core/errors.js";
import { type RequestAuth, receivedRequest } from "../http/authorize.js";
import { errorAnswer, jsonAnswer } from "../http/request-handler.js";
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
  if (!req.complete) res.setHeader("connection", "close");
  const tooLarge = ErrorCode.MESSAGE_BODY_TOO_LARGE;
  // A NimbusError as it says; anything else is a fault of ours (the store behind the signature check): a 500 that
  // says "internal error", logged, never a 400 in the fault's own words.
  const answer =
    err instanceof BodyTooLargeError
      ? jsonAnswer(HTTP_STATUS[tooLarge], { code: tooLarge, message: err.message })
      : errorAnswer(err);
  writeAnswer(res, answer);
  if (!req.complete) req.resume();
}
