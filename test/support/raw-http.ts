/**
 * @module One HTTP request with any headers (a `Host` fetch would not send), for hostile-input tests: the status,
 * the body's text and its size in bytes.
 */
import { request } from "node:http";
import { connect, type Socket } from "node:net";

export interface RawAnswer {
  status: number;
  text: string;
  bytes: number;
  headers: Record<string, string | string[] | undefined>;
}

export function rawHttp(
  baseUrl: string,
  req: { method: string; path: string; headers?: Record<string, string>; body?: string | Uint8Array },
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const r = request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers: req.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            text: body.toString("utf8"),
            bytes: body.byteLength,
            headers: res.headers,
          });
        });
        res.on("error", reject);
      },
    );
    r.on("error", reject);
    r.end(req.body);
  });
}

/**
 * An HTTP send whose body stops half-way (`bytes` sent of twice as many announced), on a raw socket: the server holds
 * what it received against its request-bytes budget until the socket is destroyed.
 */
export function halfUpload(port: number, topic: string, bytes: number): Socket {
  const upload = connect(port, "127.0.0.1");
  upload.on("error", () => {});
  upload.write(
    `POST /topics/${topic}/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
      `content-length: ${bytes * 2}\r\n\r\n${"x".repeat(bytes)}`,
  );
  return upload;
}
