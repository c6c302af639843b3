/**
 * @module A raw gRPC client of `apache.rocketmq.v2.MessagingService` for tests that send what no official
 * client would: any object (or raw bytes) to any RPC, and the answer as proto-loader decodes it.
 */
import {
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  Metadata,
  makeGenericClientConstructor,
  type ServiceError,
} from "@grpc/grpc-js";
import { messagingService, type RpcName } from "../../lib/grpc/messaging-service.js";

export interface RawAnswer {
  status?: { code: string; message: string };
  [field: string]: unknown;
}

export function rawClient(endpoint: string, creds: ChannelCredentials, options: ChannelOptions = {}): Client {
  const Ctor = makeGenericClientConstructor(messagingService(), "MessagingService");
  return new Ctor(endpoint, creds, { "grpc.max_send_message_length": 64 * 1024 * 1024, ...options });
}

/** A unary call of `rpc` with `request` (an object the service's codec encodes), answered or failed with a gRPC status. */
export function unaryCall(client: Client, rpc: RpcName, request: object, md = new Metadata()): Promise<RawAnswer> {
  const method = messagingService()[rpc];
  if (method === undefined) throw new Error(`no RPC ${rpc}`);
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize as (b: Buffer) => RawAnswer,
      request,
      md,
      { deadline: Date.now() + 10_000 },
      (err: ServiceError | null, answer?: RawAnswer) => (err ? reject(err) : resolve(answer ?? {})),
    ),
  );
}

/** A unary call with `bytes` as the request message, as sent: for undecodable input. */
export function rawBytesCall(client: Client, path: string, bytes: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => ({ bytes: b.byteLength }),
      bytes,
      new Metadata(),
      { deadline: Date.now() + 10_000 },
      (err: ServiceError | null, answer?: RawAnswer) => (err ? reject(err) : resolve(answer ?? {})),
    ),
  );
}
