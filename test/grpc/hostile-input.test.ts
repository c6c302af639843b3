/**
 * @module Hostile input at the gRPC endpoint: undecodable protobuf, fields of the wrong type, oversized
 * messages, illegal names (a transaction id an end would make a key of included), unknown topics and methods,
 * message types that contradict their fields, Telemetry streams that never send Settings or come by the hundred. Each gets a status (never a hang, never a crash)
 * and writes nothing; the endpoint keeps serving.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Client, credentials, status as grpcStatus, Metadata, type ServiceError } from "@grpc/grpc-js";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { messagingService } from "../../lib/grpc/messaging-service.js";
import { createTopic } from "../support/consumer-helpers.js";
import { useGrpcServer } from "../support/grpc-fixture.js";
import { rawBytesCall, rawClient, unaryCall } from "../support/grpc-raw.js";
import { uniqueName } from "../support/server-fixture.js";
import { storedMessages } from "./producer-suite.js";

const TOPIC = uniqueName("GrpcHostile");
const message = (over: Record<string, unknown> = {}, sys: Record<string, unknown> = {}) => ({
  topic: { name: TOPIC },
  body: Buffer.from("x"),
  systemProperties: { messageId: "01ABCDEF0123456789ABCDEF0123456789", messageType: "NORMAL", ...sys },
  ...over,
});

const failure = (p: Promise<unknown>): Promise<ServiceError> =>
  p.then(
    () => assert.fail("expected a gRPC error status"),
    (err: ServiceError) => err,
  );

describe("hostile input at the gRPC endpoint", () => {
  const ctx = useGrpcServer("local", {}, { grpcTelemetry: { maxStreams: 20, settingsTimeoutMs: 300 } });
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: 10_000 });
  let client: Client | undefined;
  const raw = () => {
    client ??= rawClient(ctx.endpoint, credentials.createInsecure());
    return client;
  };
  const withClientId = () => {
    const md = new Metadata();
    md.set("x-mq-client-id", "hostile@1@1@test");
    return md;
  };

  it("undecodable protobuf and wrong wire types are INTERNAL statuses from the codec; nothing is written", async () => {
    await createTopic(api(), TOPIC, 1);
    const path = messagingService().SendMessage?.path ?? "";
    const garbage = await failure(rawBytesCall(raw(), path, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])));
    assert.equal(garbage.code, grpcStatus.INTERNAL);
    // Field 1 (messages, a message) sent as a varint: the wrong wire type.
    const wrongType = await failure(rawBytesCall(raw(), path, Buffer.from([0x08, 0x01])));
    assert.equal(wrongType.code, grpcStatus.INTERNAL);
    assert.deepEqual(await storedMessages(api(), TOPIC), []);
  });

  it("a message over the size limit is RESOURCE_EXHAUSTED; a body over 4 MiB is MESSAGE_BODY_TOO_LARGE", async () => {
    const huge = await failure(
      unaryCall(raw(), "SendMessage", { messages: [message({ body: Buffer.alloc(7 << 20) })] }),
    );
    assert.equal(huge.code, grpcStatus.RESOURCE_EXHAUSTED);
    const big = await unaryCall(raw(), "SendMessage", { messages: [message({ body: Buffer.alloc((4 << 20) + 1) })] });
    assert.equal(big.status?.code, "MESSAGE_BODY_TOO_LARGE");
    assert.deepEqual(await storedMessages(api(), TOPIC), []);
  });

  it("illegal names, unknown topics, empty bodies and contradicting types are refused with their codes", async () => {
    const cases: [string, object, string][] = [
      ["an illegal topic name", { messages: [message({ topic: { name: "bad topic!" } })] }, "BAD_REQUEST"],
      ["an unknown topic", { messages: [message({ topic: { name: uniqueName("Nope") } })] }, "TOPIC_NOT_FOUND"],
      ["an empty body", { messages: [message({ body: Buffer.alloc(0) })] }, "BAD_REQUEST"],
      [
        "FIFO without a group",
        { messages: [message({}, { messageType: "FIFO" })] },
        "MESSAGE_PROPERTY_CONFLICT_WITH_TYPE",
      ],
      [
        "NORMAL with a group",
        { messages: [message({}, { messageGroup: "g" })] },
        "MESSAGE_PROPERTY_CONFLICT_WITH_TYPE",
      ],
      ["a lite message", { messages: [message({}, { messageType: "LITE", liteTopic: "x" })] }, "UNSUPPORTED"],
      ["no message", { messages: [] }, "BAD_REQUEST"],
      [
        "a system property as a user property",
        { messages: [message({ userProperties: { UNIQ_KEY: "x" } })] },
        "BAD_REQUEST",
      ],
      ["a namespace", { messages: [message({ topic: { name: TOPIC, resourceNamespace: "ns" } })] }, "BAD_REQUEST"],
    ];
    for (const [what, request, code] of cases) {
      const answer = await unaryCall(raw(), "SendMessage", request);
      assert.equal(answer.status?.code, code, `${what}: ${answer.status?.message}`);
      assert.ok((answer.status?.message.length ?? 0) <= 520, "a bounded message");
    }
    // A transaction id the HTTP end would refuse (it becomes a store key) is refused before the store is asked.
    for (const transactionId of ["AB/CD", "A".repeat(129)]) {
      const end = await unaryCall(
        raw(),
        "EndTransaction",
        {
          topic: { name: TOPIC },
          messageId: "01ABCDEF0123456789ABCDEF0123456789",
          transactionId,
          resolution: "COMMIT",
          source: "SOURCE_CLIENT",
        },
        withClientId(),
      );
      assert.equal(
        end.status?.code,
        "BAD_REQUEST",
        `transaction id ${transactionId.slice(0, 8)}: ${end.status?.message}`,
      );
    }
    const route = await unaryCall(raw(), "QueryRoute", { topic: { name: uniqueName("Nope") } });
    assert.equal(route.status?.code, "TOPIC_NOT_FOUND");
    assert.ok(!(await api().listTopics()).some((t) => t.startsWith("Nope")), "nothing created");
    assert.deepEqual(await storedMessages(api(), TOPIC), []);
  });

  it("a system topic and a __proto__ property are refused as HTTP refuses them; nothing is written", async () => {
    const group = uniqueName("gSys");
    const broker = ctx.server.context.broker;
    for (const system of [`%RETRY%${group}`, `%DLQ%${group}`]) {
      await broker.topics.autoCreate(system, 1); // the route exists: refused for what it is, not as unknown
      const answer = await unaryCall(raw(), "SendMessage", { messages: [message({ topic: { name: system } })] });
      assert.equal(answer.status?.code, "BAD_REQUEST", `${system}: ${answer.status?.message}`);
      assert.match(answer.status?.message ?? "", /system topic/);
      assert.deepEqual(await storedMessages(api(), system), [], `nothing in ${system}`);
      const overHttp = await api()
        .send({ topic: system, messages: [{ body: Buffer.from("x") }] })
        .then(
          () => "stored",
          (err: { code?: string }) => err.code,
        );
      assert.equal(overHttp, "PARAMETER_ILLEGAL", "HTTP refuses it too");
    }
    const proto = { ["__proto__"]: "x", keep: "y" };
    const answer = await unaryCall(raw(), "SendMessage", { messages: [message({ userProperties: proto })] });
    assert.equal(answer.status?.code, "BAD_REQUEST", answer.status?.message);
    assert.match(answer.status?.message ?? "", /__proto__/);
    assert.deepEqual(await storedMessages(api(), TOPIC), []);
  });

  it("RPCs Nimbus does not serve answer NOT_IMPLEMENTED; a method the service lacks is UNIMPLEMENTED", async () => {
    for (const rpc of ["UpdateOffset", "GetOffset", "QueryOffset", "RecallMessage", "SyncLiteSubscription"] as const) {
      const answer = await unaryCall(raw(), rpc, {});
      assert.equal(answer.status?.code, "NOT_IMPLEMENTED", rpc);
    }
    const unknown = await failure(rawBytesCall(raw(), "/apache.rocketmq.v2.MessagingService/Nope", Buffer.alloc(0)));
    assert.equal(unknown.code, grpcStatus.UNIMPLEMENTED);
  });

  it("a Telemetry stream that never sends Settings is ended; one without a client id is refused", async () => {
    const telemetry = messagingService().Telemetry;
    assert.ok(telemetry);
    const open = (md: Metadata) =>
      raw().makeBidiStreamRequest(telemetry.path, telemetry.requestSerialize, telemetry.responseDeserialize, md);
    const ended = (stream: ReturnType<typeof open>) =>
      new Promise<number>((resolve) => {
        stream.on("data", () => undefined);
        stream.on("error", (err: ServiceError) => resolve(err.code));
        stream.on("status", (s: { code: number }) => resolve(s.code));
      });
    assert.equal(await ended(open(withClientId())), grpcStatus.FAILED_PRECONDITION);
    assert.equal(await ended(open(new Metadata())), grpcStatus.INVALID_ARGUMENT);
  });

  it("streams past the bound are refused RESOURCE_EXHAUSTED and the endpoint keeps serving", async () => {
    const telemetry = messagingService().Telemetry;
    assert.ok(telemetry);
    const streams = Array.from({ length: 30 }, (_, i) => {
      const md = new Metadata();
      md.set("x-mq-client-id", `idle@${i}@1@test`);
      const s = raw().makeBidiStreamRequest(
        telemetry.path,
        telemetry.requestSerialize,
        telemetry.responseDeserialize,
        md,
      );
      const code = new Promise<number>((resolve) => {
        s.on("data", () => undefined);
        s.on("error", (err: ServiceError) => resolve(err.code));
        s.on("status", (st: { code: number }) => resolve(st.code));
      });
      return code;
    });
    const codes = await Promise.all(streams);
    assert.equal(codes.filter((c) => c === grpcStatus.RESOURCE_EXHAUSTED).length, 10, `codes ${codes.join(",")}`);
    assert.equal(
      codes.filter((c) => c === grpcStatus.FAILED_PRECONDITION).length,
      20,
      "the rest ended for no Settings",
    );
    const route = await unaryCall(raw(), "QueryRoute", { topic: { name: TOPIC } });
    assert.equal(route.status?.code, "OK");
    raw().close();
  });
});
