/**
 * @module A local endpoint of Lambda's documented Invoke API (`POST /2015-03-31/functions/{FunctionName}/invocations`),
 * for the AWS SDK's Lambda client: RequestResponse invocations run the registered handler with lambda-local
 * (`execute`: Lambda's context, callback and timeout semantics), answer 200 with the result as the payload, and on
 * a handler error 200 with `X-Amz-Function-Error: Unhandled` and `{errorMessage, errorType}` as Lambda does; an
 * unknown function is 404 `ResourceNotFoundException`. Chosen over lambda-local's own `watch` server (which answers
 * 500 on an error, not the Invoke API) and serverless-offline (a framework, not installed): the smallest honest one.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as lambdaLocal from "lambda-local";

export type TestHandler = (event: unknown, context: unknown) => Promise<unknown>;

interface LambdaLocal {
  execute(opts: Record<string, unknown>): Promise<unknown>;
}

export interface InvokeApiServer {
  url: string;
  /** Invocations per function name, as the server saw them (event payloads). */
  invocations: Map<string, unknown[]>;
  close(): Promise<void>;
}

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/** The function name of an ARN or a name (`arn:aws:lambda:r:a:function:NAME[:qualifier]`). */
const nameOf = (fn: string): string => {
  const decoded = decodeURIComponent(fn);
  const m = /^arn:[^:]+:lambda:[^:]+:\d+:function:([^:]+)/.exec(decoded);
  return m?.[1] ?? decoded;
};

export async function startInvokeApiServer(
  handlers: Record<string, TestHandler>,
  timeoutMs = 10_000,
): Promise<InvokeApiServer> {
  const ll = ((lambdaLocal as { default?: LambdaLocal }).default ?? lambdaLocal) as LambdaLocal;
  const invocations = new Map<string, unknown[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const m = INVOKE_PATH.exec(new URL(req.url ?? "/", "http://x").pathname);
      const name = m?.[1] === undefined ? undefined : nameOf(m[1]);
      const handler = name === undefined ? undefined : handlers[name];
      const send = (status: number, headers: Record<string, string>, body: string) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(body);
      };
      if (req.method !== "POST" || name === undefined || handler === undefined) {
        send(
          404,
          { "x-amzn-errortype": "ResourceNotFoundException" },
          JSON.stringify({ Type: "User", message: `Function not found: ${name ?? req.url}` }),
        );
        return;
      }
      const event: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      invocations.set(name, [...(invocations.get(name) ?? []), event]);
      ll.execute({ event, lambdaFunc: { handler }, lambdaHandler: "handler", timeoutMs, verboseLevel: 0 }).then(
        (result) => send(200, { "x-amz-executed-version": "$LATEST" }, JSON.stringify(result ?? null)),
        (err: unknown) => {
          // lambda-local rejects with Lambda's own error object ({errorMessage, errorType, stackTrace}).
          const e = err as { errorMessage?: unknown; errorType?: unknown; message?: unknown; name?: unknown };
          const errorMessage = String(e.errorMessage ?? e.message ?? err);
          const errorType = String(e.errorType ?? e.name ?? "Error");
          send(
            200,
            { "x-amz-function-error": "Unhandled", "x-amz-executed-version": "$LATEST" },
            JSON.stringify({ errorMessage, errorType }),
          );
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    invocations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
