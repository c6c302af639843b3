/**
 * @module How the local server reads a request body without letting anonymous or slow clients hold its memory:
 * a signed server checks the signature headers before it reads a byte (the body's hash is in the signed
 * `x-amz-content-sha256`, compared once the body is read); only bytes actually received count against the
 * in-flight cap (a declared Content-Length reserves nothing), so one connection holds at most one request's
 * bytes; until the body is whole they count as arriving, which may hold only half the cap (a body whose end is read
 * with its first bytes never does); and a body that does not arrive within the read timeout is dropped with its
 * connection.
 */
import type { IncomingMessage } from "node:http";
import { ErrorCode, NimbusError } from "../core/errors.js";
import { MAX_REQUEST_BYTES } from "../protocol/index.js";
import { BodyTooLargeError } from "./api-gateway-event.js";
import type { InFlightBytes } from "./server-guard.js";

/** Default time a request's body has to arrive once its headers did (a slow upload is dropped after it). */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

export interface BodyReadOptions {
  bytes: InFlightBytes;
  timeoutMs: number;
  /** Checks the request's headers before its body is read (the signature); throws to refuse it. */
  precheck?: ((req: IncomingMessage) => Promise<void>) | undefined;
}

export interface HeldBody {
  body: Buffer;
  /** Gives the body's bytes back to the in-flight cap (once answered). */
  release(): void;
  /** The precheck ran and passed before the body was read (none runs for a request without a body). */
  prechecked: boolean;
}

/** Whether the request announces a body. */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined;
}

/**
 * The request's body, counted against `bytes` as it arrives. Throws the precheck's error before reading,
 * SYSTEM_BUSY when the cap is reached (the rest is read and dropped, so the client gets the answer rather than a
 * reset), BodyTooLargeError past MAX_REQUEST_BYTES, and destroys the request when the body is not complete
 * within `timeoutMs`.
 */
export async function readHeldBody(req: IncomingMessage, options: BodyReadOptions): Promise<HeldBody> {
  if (!hasBody(req)) return { body: Buffer.alloc(0), release: () => {}, prechecked: false };
  if (options.precheck) await options.precheck(req);
  const { bytes } = options;
  const timer = setTimeout(() => {
    req.destroy(new NimbusError(ErrorCode.PARAMETER_ILLEGAL, "the request body did not arrive in time"));
  }, options.timeoutMs);
  const chunks: Buffer[] = [];
  // The declared length, when there is one: the chunk that reaches it makes the body whole.
  const declared = req.headers["transfer-encoding"] === undefined ? Number(req.headers["content-length"]) : Number.NaN;
  let held = 0;
  /** Of `held`, the bytes counted as arriving (the body not whole yet). */
  let arriving = 0;
  let size = 0;
  let busy = false;
  const settle = () => {
    bytes.settleArriving(arriving);
    arriving = 0;
  };
  const drop = () => {
    settle();
    bytes.release(held);
    held = 0;
    chunks.length = 0;
  };
  try {
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      size += buf.byteLength;
      if (busy || size > MAX_REQUEST_BYTES) continue;
      // Whole: the declared length reached, or the rest of the body already read (its end parsed with this read).
      const whole = size === declared || req.complete;
      if (!bytes.take(buf.byteLength, !whole)) {
        busy = true;
        drop();
        continue;
      }
      held += buf.byteLength;
      if (whole) settle();
      else arriving += buf.byteLength;
      chunks.push(buf);
    }
  } catch (err) {
    drop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  settle();
  if (busy)
    throw new NimbusError(
      ErrorCode.SYSTEM_BUSY,
      `the server is reading ${bytes.used} bytes of requests already (cap ${bytes.cap}; of requests still arriving, cap ` +
        `${bytes.arrivingCap}); retry later`,
    );
  if (size > MAX_REQUEST_BYTES) {
    drop();
    throw new BodyTooLargeError(`the request body is ${size} bytes, over the limit of ${MAX_REQUEST_BYTES}`);
  }
  const kept = held;
  return {
    body: Buffer.concat(chunks),
    release: () => bytes.release(kept),
    prechecked: options.precheck !== undefined,
  };
}
