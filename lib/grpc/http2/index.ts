/**
 * @module HTTP/2 for a gRPC server, on a plain or TLS socket: connections, streams, HPACK. Written here rather
 * than on `node:http2` for what a call costs: docs/design.md ("The gRPC door's HTTP/2") has the measurement.
 */
export { Http2Connection } from "./connection.js";
export { H2_ERROR } from "./frames.js";
export { encodeLiteralHeaders, encodeResponseHeaders } from "./hpack.js";
export type { ConnectionOptions, RequestHeaders, ServerStream, StreamListener } from "./stream.js";
