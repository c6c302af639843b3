/**
 * @module `npx tsx test/bench/grpc-transport.ts [--calls 25000] [--in-flight 64] [--pairs 2]`: what one unary
 * gRPC call costs a server's CPU on its transport alone, the gRPC door's own HTTP/2 (lib/grpc/http2 and
 * grpc-call.ts) against grpc-js's server. Each serves an echo method of 1 KiB in this process; grpc-js's client
 * calls it from a child process with `--in-flight` calls at once; the server's `process.cpuUsage()` over
 * `--calls` calls (after a warm-up of a fifth as many) is divided by them. The two alternate `--pairs` times.
 * See docs/design.md ("The gRPC door's HTTP/2").
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, createServer, type Server as NetServer } from "node:net";
import { parseArgs } from "node:util";
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from "@grpc/grpc-js";
import { GrpcCall, type MethodCodec } from "../../lib/grpc/grpc-call.js";
import { Http2Connection } from "../../lib/grpc/http2/index.js";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "25000" },
    "in-flight": { type: "string", default: "64" },
    pairs: { type: "string", default: "2" },
    client: { type: "string" },
  },
});
const calls = Number(values.calls);
const inFlight = Number(values["in-flight"]);
const identity = (b: Buffer) => b;
const ECHO = "/bench.Echo/Call";
const MARK = "/bench.Echo/Mark";

/** The client, in its own process: a warm-up, a mark, the measured calls, a mark. */
async function runClient(port: number): Promise<void> {
  const { Client, credentials } = await import("@grpc/grpc-js");
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  const payload = Buffer.alloc(1024, 7);
  const call = (path: string) =>
    new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(path, identity, identity, payload, (err, answer) =>
        err || answer === undefined ? reject(err) : resolve(answer),
      ),
    );
  const run = async (n: number) => {
    let started = 0;
    const worker = async () => {
      while (started < n) {
        started++;
        if ((await call(ECHO)).length !== payload.length) throw new Error("a wrong echo");
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
  };
  await run(Math.ceil(calls / 5));
  await call(MARK);
  await run(calls);
  await call(MARK);
  client.close();
}

/** Marks start and stop the server's CPU count; the second mark resolves µs of CPU per call. */
function cpuMarks() {
  let started: NodeJS.CpuUsage | undefined;
  let resolve: (us: number) => void = () => {};
  const result = new Promise<number>((r) => {
    resolve = r;
  });
  return {
    result,
    mark() {
      if (started === undefined) started = process.cpuUsage();
      else {
        const used = process.cpuUsage(started);
        resolve((used.user + used.system) / calls);
      }
    },
  };
}

async function measure(port: number, marks: ReturnType<typeof cpuMarks>): Promise<number> {
  const child = fork(new URL(import.meta.url).pathname, ["--client", String(port), "--calls", String(calls)], {
    execArgv: ["--import", "tsx"],
    stdio: "inherit",
  });
  const [code] = (await once(child, "exit")) as [number];
  if (code !== 0) throw new Error(`the client exited with ${code}`);
  return marks.result;
}

async function ownTransport(): Promise<number> {
  const marks = cpuMarks();
  const codec: MethodCodec = { requestDeserialize: identity, responseSerialize: (m) => m as Buffer };
  const server: NetServer = createServer((socket) => {
    socket.setNoDelay(true);
    new Http2Connection(
      socket,
      (stream, headers) => {
        const path = headers.get(":path")?.[0];
        const call = new GrpcCall(stream, headers, codec, 1 << 20);
        call.once("end", () => {
          if (path === MARK) marks.mark();
          // Answered on a later microtask, as the door's handlers answer.
          Promise.resolve().then(() => {
            call.write(call.request);
            call.end();
          });
        });
      },
      {
        maxConcurrentStreams: 1000,
        maxHeaderBlockBytes: 65536,
        streamWindow: 1 << 20,
        keepaliveMs: 0,
        keepaliveTimeoutMs: 0,
        maxPendingBytes: 32 << 20,
      },
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  try {
    return await measure((server.address() as AddressInfo).port, marks);
  } finally {
    server.close();
  }
}

async function grpcJs(): Promise<number> {
  const marks = cpuMarks();
  const method = (path: string) => ({
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  });
  const server = new Server({ "grpc.enable_channelz": 0 });
  const echo = (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
    Promise.resolve().then(() => callback(null, call.request));
  };
  server.addService(
    { Call: method(ECHO), Mark: method(MARK) },
    {
      Call: echo,
      Mark: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        marks.mark();
        echo(call, callback);
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  try {
    return await measure(port, marks);
  } finally {
    server.forceShutdown();
  }
}

if (values.client !== undefined) {
  await runClient(Number(values.client));
} else {
  console.log(`grpc-transport: ${calls} unary calls of 1 KiB, ${inFlight} in flight, server CPU µs per call`);
  for (let pair = 1; pair <= Number(values.pairs); pair++) {
    const own = await ownTransport();
    const theirs = await grpcJs();
    console.log(`pair ${pair}: own HTTP/2 ${own.toFixed(1)}, grpc-js ${theirs.toFixed(1)}`);
  }
}
