/**
 * @module The HTTP shapes the handlers see: API Gateway HTTP API (payload v2) events and results. The
 * local server builds the same events, so one handler serves both; and the request and answer the request
 * path works on, whatever carried them.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";

export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;

/** A request as the handlers need it, whatever carried it. */
export interface ApiRequest {
  method: string;
  /** The path, without the query. */
  path: string;
  query: Record<string, string>;
  /** The query string as sent, without `?` (what a signature covers); default: `query` re-encoded. */
  rawQuery?: string | undefined;
  /** A request header by lower-case name (`content-type`, `accept`, `authorization`, ...). */
  header(name: string): string | undefined;
  /** The raw body; undefined or empty when there is none. */
  body: Uint8Array | undefined;
  /** When the request arrived, on the load shedder's clock (`LoadShedder.now()`); default when it reaches the handler. */
  receivedAt?: number | undefined;
  /**
   * The server ran `RequestAuth.checkHeaders` on this request before reading its body (the local server does, with
   * `--auth`): its signature over the headers and the body's claimed hash is the user's, so the handler's check
   * only compares the body with that hash. Set by the server's code, never from anything the client sent.
   */
  signedHeadersChecked?: boolean | undefined;
}

/** An answer: JSON text, or a binary batch's bytes. */
export interface ApiAnswer {
  status: number;
  contentType: string;
  body: string | Uint8Array;
}
