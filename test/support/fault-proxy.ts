/**
 * @module A loopback HTTP proxy in front of an emulator (dynalite, s3rver) that injects network faults
 * below the AWS SDK, so the SDK's own retries really happen:
 *
 * - `drop-reply`: the request is forwarded and applied, then the client's connection is cut instead of
 *   answering (the SDK sees a reset socket and retries a request that already took effect);
 * - `late-apply`: the client's connection is cut at once and the request is forwarded only after
 *   `lateApplyMs` (a timeout whose write lands after the client gave up);
 * - `throttle`: answered by the proxy with the service's throttling error, nothing forwarded;
 * - `delay`: forwarded after `delayMs` (a latency spike).
 *
 * `decide` sees each request and picks its fault (or none). The proxy counts what it injected.
 */
import { createServer, type IncomingHttpHeaders, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type ProxyFault = "drop-reply" | "late-apply" | "throttle" | { delayMs: number };

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** DynamoDB's operation (from `X-Amz-Target`, e.g. "PutItem"), undefined for S3 requests. */
  dynamoOperation: string | undefined;
  /** DynamoDB's `TableName`, when the body names one. */
  tableName: string | undefined;
}

export interface FaultProxyCounts {
  requests: number;
  droppedReplies: number;
  lateApplied: number;
  throttled: number;
  delayed: number;
}

export interface FaultProxy {
  readonly url: string;
  readonly counts: FaultProxyCounts;
  stop(): Promise<void>;
}

export interface FaultProxyOptions {
  /** The emulator's URL, e.g. `http://127.0.0.1:40123`. */
  target: string;
  /** Which service's throttling error to answer with. */
  service: "dynamodb" | "s3";
  decide: (req: ProxiedRequest) => ProxyFault | undefined;
  /** How long a `late-apply` request waits before it is forwarded. Default 50 ms. */
  lateApplyMs?: number;
}

interface UpstreamReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  const counts: FaultProxyCounts = { requests: 0, droppedReplies: 0, lateApplied: 0, throttled: 0, delayed: 0 };
  const lateApplyMs = options.lateApplyMs ?? 50;
  const inFlight = new Set<Promise<unknown>>();

  const forward = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer) => {
    const done = new Promise<UpstreamReply>((resolve, reject) => {
      const upstream = request({ host: target.hostname, port: target.port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      });
      upstream.on("error", reject);
      upstream.end(body);
    });
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done)).catch(() => undefined);
    return done;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? "GET";
      const path = req.url ?? "/";
      const proxied: ProxiedRequest = {
        method,
        path,
        headers: req.headers,
        body,
        dynamoOperation: dynamoOperationOf(req.headers),
        tableName: tableNameOf(body),
      };
      counts.requests++;
      void handle(proxied, res).catch(() => res.socket?.destroy());
    });
  });

  async function handle(req: ProxiedRequest, res: ServerResponse): Promise<void> {
    const fault = options.decide(req);
    if (fault === "throttle") {
      counts.throttled++;
      answerThrottled(res, options.service);
      return;
    }
    if (fault === "late-apply") {
      counts.lateApplied++;
      res.socket?.destroy();
      await sleep(lateApplyMs);
      await forward(req.method, req.path, req.headers, req.body).catch(() => undefined);
      return;
    }
    if (typeof fault === "object") {
      counts.delayed++;
      await sleep(fault.delayMs);
    }
    const reply = await forward(req.method, req.path, req.headers, req.body);
    if (fault === "drop-reply") {
      counts.droppedReplies++;
      res.socket?.destroy();
      return;
    }
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await Promise.allSettled([...inFlight]);
    },
  };
}

function dynamoOperationOf(headers: IncomingHttpHeaders): string | undefined {
  const target = headers["x-amz-target"];
  return typeof target === "string" ? target.split(".").pop() : undefined;
}

function tableNameOf(body: Buffer): string | undefined {
  if (body.byteLength === 0 || body[0] !== 0x7b) return undefined; // not a JSON object: an S3 request
  try {
    const name = (JSON.parse(body.toString("utf8")) as { TableName?: unknown }).TableName;
    return typeof name === "string" ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The throttling answer each service gives: DynamoDB's JSON error, S3's 503 SlowDown. */
function answerThrottled(res: ServerResponse, service: "dynamodb" | "s3"): void {
  if (service === "dynamodb") {
    res.writeHead(400, { "content-type": "application/x-amz-json-1.0", "x-amzn-errortype": "ThrottlingException" });
    res.end(
      JSON.stringify({
        __type: "com.amazonaws.dynamodb.v20120810#ThrottlingException",
        message: "Rate of requests exceeds the allowed throughput.",
      }),
    );
    return;
  }
  res.writeHead(503, { "content-type": "application/xml" });
  res.end(
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
  );
}
