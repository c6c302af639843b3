/**
 * @module RocketMQ's official Node.js clients for the gRPC proxy's grants check (grpc-grants.test.ts), each able to
 * send its Heartbeat now: the client sends its own (`wrapHeartbeatRequest`, through its own RPC manager) only
 * every 10 s, and a test must not wait on a timer. Nothing else of the clients is changed.
 */
import assert from "node:assert/strict";
import { Producer, SimpleConsumer } from "rocketmq-client-nodejs";

/** apache.rocketmq.v2.Code.OK. */
const OK = 20000;

type Answer = { getStatus(): { getCode(): number } | undefined };

async function heartbeatEach<E>(endpoints: E[], send: (e: E) => Promise<Answer>): Promise<void> {
  assert.ok(endpoints.length > 0, "the client knows a route endpoint to send its heartbeat to");
  for (const e of endpoints) assert.equal((await send(e)).getStatus()?.getCode(), OK, "Heartbeat answered OK");
}

export class HeartbeatingProducer extends Producer {
  /** One Heartbeat to each route endpoint, as the client's 10 s timer sends it. */
  heartbeatNow(): Promise<void> {
    return heartbeatEach(this.getTotalRouteEndpoints(), (e) =>
      this.rpcClientManager.heartbeat(e, this.wrapHeartbeatRequest(), this.requestTimeout),
    );
  }
}

export class HeartbeatingSimpleConsumer extends SimpleConsumer {
  heartbeatNow(): Promise<void> {
    return heartbeatEach(this.getTotalRouteEndpoints(), (e) =>
      this.rpcClientManager.heartbeat(e, this.wrapHeartbeatRequest(), this.requestTimeout),
    );
  }
}
