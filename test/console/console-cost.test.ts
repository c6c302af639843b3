/**
 * What the console's reads cost in storage requests (docs/console.md, docs/cost.md): the Cluster view's
 * refresh (`GET /brokers`) and one lag sample of a group (`GET /groups/{group}/consumers` and
 * `GET /groups/{group}/progress`, plus the members' `GET /groups/{group}/status`) on a topic of 4 queues, and the
 * topic page's "Measure load" (`GET /topics/{topic}/status?load=true`) beside its plain status, counted by the
 * store's request counter.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { diffCounts, type RequestCounts } from "../../lib/storage/request-counter.js";
import { createTopic, report } from "../support/consumer-helpers.js";
import { uniqueName, useTestServer } from "../support/server-fixture.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

describe("console reads, in storage requests", () => {
  const ctx = useTestServer("local");
  const api = () => new NimbusApi({ endpoints: ctx.server.url, timeoutMs: TEST_TIMEOUT_MS });
  const counted = async (run: () => Promise<unknown>): Promise<RequestCounts> => {
    const counter = ctx.server.server.storage.counter;
    const before = counter.snapshot();
    await run();
    return diffCounts(counter.snapshot(), before);
  };

  it("a Cluster refresh is one query; a lag sample reads the group's members, topics, offsets and queue ends", async () => {
    const topic = uniqueName("CostTopic");
    const group = uniqueName("costGroup");
    const queues = await createTopic(api(), topic, 2);
    await api().commitOffsets(
      group,
      topic,
      queues.map((q) => ({ brokerName: q.brokerName, queueId: q.queueId, offset: 0 })),
    );
    const cluster = await counted(() => fetch(`${ctx.server.url}/brokers`).then((r) => r.json()));
    assert.equal(cluster.tableReads, 1, "GET /brokers: one partition query");
    assert.equal(cluster.tableWrites + cluster.objectGets + cluster.objectPuts, 0);
    const sample = await counted(() => Promise.all([api().consumerConnection(group), api().progress(group)]));
    assert.equal(sample.tableWrites + sample.objectPuts, 0, "a sample writes nothing");
    // The group page also reloads the members' status (GET /groups/{group}/status) each period.
    const status = await counted(() => api().consumerStatus(group));
    assert.equal(status.tableWrites + status.objectPuts, 0, "a status read writes nothing");
    report("console reads", {
      clusterRefreshTableReads: cluster.tableReads,
      clusterRefreshReadUnits: cluster.readUnits,
      lagSampleTableReads: sample.tableReads,
      lagSampleReadUnits: sample.readUnits,
      lagSampleObjectGets: sample.objectGets,
      statusTableReads: status.tableReads,
      statusReadUnits: status.readUnits,
    });
  });

  it("measuring a topic's load: one query of each queue's index key, and of an empty queue's layout first", async () => {
    const topic = uniqueName("CostLoad");
    await createTopic(api(), topic, 2);
    await api().send({
      topic,
      brokerName: "broker-a",
      queueId: 0,
      messages: [{ body: new TextEncoder().encode("x") }],
    });
    // The server's background jobs share the counter (they only add): the fewest of three rounds is the path.
    const plain: RequestCounts[] = [];
    const measured: RequestCounts[] = [];
    for (let round = 0; round < 3; round++) {
      plain.push(await counted(() => api().topicStatus(topic)));
      measured.push(await counted(() => api().topicStatus(topic, { load: true })));
    }
    const fewest = (rounds: RequestCounts[], count: keyof RequestCounts) => Math.min(...rounds.map((r) => r[count]));
    assert.equal(fewest(measured, "tableWrites") + fewest(measured, "objectPuts"), 0, "a measure writes nothing");
    // The written queue's layout is known to the server (one key); an empty queue's may still become either.
    const added = fewest(measured, "tableReads") - fewest(plain, "tableReads");
    assert.equal(added, 1 + 3 * 2, "4 index queries, 3 layout reads");
    report("topic load measure", {
      statusTableReads: fewest(plain, "tableReads"),
      statusReadUnits: fewest(plain, "readUnits"),
      measuredTableReads: fewest(measured, "tableReads"),
      measuredReadUnits: fewest(measured, "readUnits"),
    });
  });
});
