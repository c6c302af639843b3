/**
 * @module Bare HTTP/2 server connections of the gRPC door's own HTTP/2 (lib/grpc/http2) for its tests: a server whose
 * streams go to a handler, an echo handler, and a reader of the frames a raw client receives.
 */
import { once } from "node:events";
import { type AddressInfo, createServer, type Server } from "node:net";
import type { UntakenAnswers } from "../../lib/core/untaken-answers.js";
import { encodeLiteralHeaders, encodeResponseHeaders } from "../../lib/grpc/http2/hpack.js";
import { Http2Connection, type RequestHeaders, type ServerStream } from "../../lib/grpc/http2/index.js";

/** A server of bare connections: each stream is given to `handle`. */
export async function serve(
  handle: (stream: ServerStream, headers: RequestHeaders) => void,
  streams = 100,
  maxPendingBytes = 32 * 1024 * 1024,
  untakenAnswers?: UntakenAnswers,
) {
  const connections: Http2Connection[] = [];
  const paused = { times: 0 };
  const server: Server = createServer((socket) => {
    socket.on("pause", () => paused.times++);
    connections.push(
      new Http2Connection(socket, handle, {
        maxConcurrentStreams: streams,
        maxHeaderBlockBytes: 64 * 1024,
        streamWindow: 64 * 1024,
        keepaliveMs: 0,
        keepaliveTimeoutMs: 0,
        maxPendingBytes,
        untakenAnswers,
      }),
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    paused,
    close: async () => {
      for (const c of connections) c.destroy();
      server.close();
      await once(server, "close");
    },
  };
}

/** Answers each request with its body repeated `times`, after reading all of it, with a trailer. */
export const echo =
  (times: number) =>
  (stream: ServerStream, headers: RequestHeaders): void => {
    const parts: Buffer[] = [];
    stream.onData = (chunk) => parts.push(Buffer.from(chunk));
    stream.onEnd = () => {
      const body = Buffer.concat(parts);
      stream.respond(encodeResponseHeaders([["x-path", headers.get(":path")?.[0] ?? ""]]));
      for (let i = 0; i < times; i++) stream.write(body);
      stream.end(encodeLiteralHeaders([["x-bytes", String(body.length * times)]]));
    };
  };

export interface RawFrame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

export function parseFrames(bytes: Buffer): RawFrame[] {
  const out: RawFrame[] = [];
  for (let at = 0; at + 9 <= bytes.length; ) {
    const length = bytes.readUIntBE(at, 3);
    if (at + 9 + length > bytes.length) break;
    const [type = 0, flags = 0] = [bytes[at + 3], bytes[at + 4]];
    out.push({ type, flags, stream: bytes.readUInt32BE(at + 5), payload: bytes.subarray(at + 9, at + 9 + length) });
    at += 9 + length;
  }
  return out;
}
