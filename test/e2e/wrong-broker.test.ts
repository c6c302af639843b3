/**
 * @module Issue 26, finding 10: the SDK refreshes a broker's route on 421 WRONG_BROKER. A name server and two broker
 * processes (in one Node process, on one store, each in its role); the client's address book is made stale
 * (broker-a "at" broker-b's address, as after broker-a moved); a send and a pull for broker-a still land on
 * broker-a, through the refreshed route, on the embedded store and on the AWS adapters.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { type LocalServer, openStorage, serveOn } from "../../lib/dev/local-server.js";
import type { Storage } from "../../lib/storage/storage.js";
import { type Backing, MODE_LABEL, openBacking } from "../support/server-fixture.js";

for (const mode of ["local", "aws"] as const) {
  describe(`the SDK follows a moved broker on 421 WRONG_BROKER (${MODE_LABEL[mode]})`, () => {
    let backing: Backing;
    let storage: Storage;
    const servers: LocalServer[] = [];
    let api: NimbusApi;
    before(async () => {
      backing = await openBacking(mode);
      storage = await openStorage(
        backing.choice.kind === "aws" ? { ...backing.choice, provision: true } : backing.choice,
      );
      const quiet = { port: 0, registerIntervalMs: 3_600_000, retentionIntervalMs: 3_600_000 };
      servers.push(await serveOn(storage, { ...quiet, role: { kind: "namesrv" } }, false));
      for (const brokerName of ["broker-a", "broker-b"])
        servers.push(await serveOn(storage, { ...quiet, role: { kind: "broker", brokerName, brokerId: 0 } }, false));
      api = new NimbusApi({ endpoints: servers[0]?.url ?? "" });
    });
    after(async () => {
      await api.close();
      for (const s of servers.reverse()) await s.close();
      await storage.close();
      await backing.release();
    });

    it("a send and a pull for broker-a reach it after the address book named another broker's address", async () => {
      await api.updateTopic("Moved", { readQueueNums: 1, writeQueueNums: 1 });
      const first = await api.send({
        topic: "Moved",
        brokerName: "broker-a",
        queueId: 0,
        messages: [{ body: new Uint8Array([1]) }],
      });
      assert.equal(first.messageQueue.brokerName, "broker-a");
      const [, brokerA, brokerB] = servers;
      assert.ok(brokerA && brokerB);
      // Stale: the client believes broker-a's master is at broker-b's address.
      api.brokers.learn([{ cluster: "DefaultCluster", brokerName: "broker-a", brokerAddrs: { "0": brokerB.url } }]);
      const sent = await api.send({
        topic: "Moved",
        brokerName: "broker-a",
        queueId: 0,
        messages: [{ body: new Uint8Array([2]) }],
      });
      assert.equal(sent.queueOffset, 1);
      assert.deepEqual(api.brokers.candidates("broker-a", "write"), [brokerA.url], "the route was refreshed");
      api.brokers.learn([{ cluster: "DefaultCluster", brokerName: "broker-a", brokerAddrs: { "0": brokerB.url } }]);
      const pulled = await api.pull({
        consumerGroup: "G",
        topic: "Moved",
        brokerName: "broker-a",
        queueId: 0,
        queueOffset: 0,
      });
      assert.equal(pulled.messages.length, 2);
    });
  });
}
