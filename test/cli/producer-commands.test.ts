/** @module The built `nimbus producerConnection` against a local broker: a group's live producers, --json, errors. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TransactionProducer } from "../../lib/client/producer/transaction-producer.js";
import { ensureBuilt, nimbus, startTestBroker, type TestBroker, tableRows } from "../support/cli-runner.js";

describe("nimbus producerConnection (the built CLI)", () => {
  let broker: TestBroker;
  let producer: TransactionProducer;
  const run = (...args: string[]) => nimbus(args, { url: broker.url });

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
    producer = new TransactionProducer({ producerGroup: "CliProducers", endpoints: broker.url });
    await producer.start();
  });
  after(async () => {
    await producer.shutdown();
    await broker.close();
  });

  it("lists the group's live producers: client id, address, language, version, last heartbeat", async () => {
    const r = await run("producerConnection", "-g", "CliProducers");
    assert.equal(r.code, 0, r.stderr);
    const [row, ...more] = tableRows(r.stdout);
    assert.equal(more.length, 0);
    assert.deepEqual(row?.slice(0, 4), [producer.clientId, producer.clientId.split("@")[0], "TYPESCRIPT", "0.1.0"]);
    const json = JSON.parse((await run("producerConnection", "-g", "CliProducers", "--json")).stdout);
    assert.equal(json.producers[0].clientId, producer.clientId);
  });

  it("says so for a group without live producers, and refuses a bad group name with the API's code", async () => {
    const empty = await run("producerConnection", "-g", "NobodyHere");
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stderr, /no live producer/);
    const bad = await run("producerConnection", "-g", "bad group");
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /PARAMETER_ILLEGAL/);
  });
});
