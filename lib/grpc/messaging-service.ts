/**
 * @module RocketMQ 5's gRPC protocol, `apache.rocketmq.v2.MessagingService`, from its own `.proto` files
 * (apache/rocketmq-apis, Apache-2.0, shipped in ./proto with their license headers: the product cannot load
 * them from the test-only client package, and writing a subset by hand would invite a wrong field number).
 * `@grpc/proto-loader` reads them once per process; messages decode to plain objects with camelCase fields,
 * enums as their names, 64-bit integers as numbers, unset fields as their defaults, and every `oneof`
 * naming its set field (`command: "settings"`).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadPackageDefinition, type ServiceDefinition } from "@grpc/grpc-js";
import { loadSync, type Options } from "@grpc/proto-loader";
import { attachWireProperties, sendRequestProperties } from "./wire-properties.js";

/** The proto files' folder: beside this module in the repository, or beside the built one's source in a package. */
function protoRoot(): string {
  const candidates = ["./vendor/rocketmq-apis/", "../../../lib/grpc/vendor/rocketmq-apis/"].map((p) =>
    fileURLToPath(new URL(p, import.meta.url)),
  );
  const found = candidates.find((dir) => existsSync(`${dir}apache/rocketmq/v2/service.proto`));
  if (found === undefined)
    throw new Error(`the RocketMQ .proto files are missing (looked in ${candidates.join(", ")})`);
  return found;
}

export const LOADER_OPTIONS: Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

let loaded: ServiceDefinition | undefined;

/** The service definition grpc-js serves (its 17 methods, each with the codecs of its messages). */
export function messagingService(): ServiceDefinition {
  if (loaded) return loaded;
  const definition = loadSync("apache/rocketmq/v2/service.proto", { ...LOADER_OPTIONS, includeDirs: [protoRoot()] });
  const grpcObject = loadPackageDefinition(definition) as unknown as {
    apache: { rocketmq: { v2: { MessagingService: { service: ServiceDefinition } } } };
  };
  const service = grpcObject.apache.rocketmq.v2.MessagingService.service;
  const send = service.SendMessage;
  if (send === undefined) throw new Error("the RocketMQ .proto files have no SendMessage");
  // A map entry keyed `__proto__` vanishes in the decoded object: the send reads the entries as sent too.
  const decodeSend = send.requestDeserialize;
  loaded = {
    ...service,
    SendMessage: {
      ...send,
      requestDeserialize: (bytes: Buffer) => {
        const decoded = decodeSend(bytes);
        attachWireProperties(decoded as object, sendRequestProperties(bytes));
        return decoded;
      },
    },
  };
  return loaded;
}

/** The RPC names of the service, as the clients call them. */
export type RpcName =
  | "QueryRoute"
  | "Heartbeat"
  | "SendMessage"
  | "QueryAssignment"
  | "ReceiveMessage"
  | "AckMessage"
  | "ForwardMessageToDeadLetterQueue"
  | "PullMessage"
  | "UpdateOffset"
  | "GetOffset"
  | "QueryOffset"
  | "EndTransaction"
  | "Telemetry"
  | "NotifyClientTermination"
  | "ChangeInvisibleDuration"
  | "RecallMessage"
  | "SyncLiteSubscription";
