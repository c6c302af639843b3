/**
 * @module The built `nimbus updateSubGroup`, `deleteSubGroup` and `consumerProgress` without `-g` against a local
 * broker, typed as a RocketMQ user types them: mqadmin's option letters and defaults (broadcast off unless
 * `-d true`), the config honoured (a disabled group's consume is refused), mqadmin's other options refused with a
 * hint, bad values a usage error (exit 2) that writes nothing, and every group listed one line each.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NimbusApi } from "../../lib/client/transport/api-client.js";
import { tableRows, useCliBroker } from "../support/cli-runner.js";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

const TOPIC = "SubGroupTopic";

describe("nimbus updateSubGroup, deleteSubGroup and consumerProgress without -g (the built CLI)", () => {
  const { run, url } = useCliBroker();
  const api = () => new NimbusApi({ endpoints: url(), timeoutMs: TEST_TIMEOUT_MS });

  it("updateSubGroup -g G -r 0 -s false: mqadmin's defaults for the rest; the broker refuses the group's consume", async () => {
    const r = await run("updateSubGroup", "-g", "SG1", "-r", "0", "-s", "false", "-c", "DefaultCluster");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^create subscription group to DefaultCluster success\.\n/);
    assert.match(r.stdout, /consumeEnable=false, consumeBroadcastEnable=false, retryMaxTimes=0/);
    const config = await api().getSubGroup("SG1");
    assert.deepEqual(
      [config.configured, config.consumeEnable, config.consumeBroadcastEnable, config.retryMaxTimes],
      [true, false, false, 0],
    );
    assert.equal((await run("updateTopic", "-t", TOPIC, "-b", "broker-a", "-r", "1", "-w", "1")).code, 0);
    await assert.rejects(
      api().pull({ consumerGroup: "SG1", topic: TOPIC, brokerName: "broker-a", queueId: 0, queueOffset: 0 }),
      /subscription group no permission, SG1/,
      "the broker refuses the disabled group's pulls",
    );

    const json = await run("updateSubGroup", "-g", "SG1", "-d", "true", "-o", "true", "--json");
    assert.equal(json.code, 0, json.stderr);
    const replaced = JSON.parse(json.stdout);
    assert.deepEqual(
      [replaced.consumeEnable, replaced.consumeBroadcastEnable, replaced.consumeMessageOrderly, replaced.retryMaxTimes],
      [true, true, true, 16],
      "a replace: what is not given takes the default again",
    );
  });

  it("bad values, unknown clusters and mqadmin options Nimbus has no use for: refused, nothing written", async () => {
    const before = await api().getSubGroup("SG2");
    for (const args of [
      ["-r", "-1"],
      ["-r", "abc"],
      ["-r", "1001"],
      ["-s", "yes"],
      ["-q", "2"],
      ["-m", "true"],
      ["-i", "1"],
      ["-w", "1"],
      ["-a", "false"],
      ["-b", "127.0.0.1:10911"],
    ]) {
      const r = await run("updateSubGroup", "-g", "SG2", ...args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /^nimbus: [^\n]+\n$/);
    }
    const hint = await run("updateSubGroup", "-g", "SG2", "-q", "2");
    assert.match(hint.stderr, /-q \(mqadmin's retryQueueNums\) is not used by Nimbus/);
    const cluster = await run("updateSubGroup", "-g", "SG2", "-c", "NoSuchCluster");
    assert.equal(cluster.code, 1);
    assert.match(cluster.stderr, /PARAMETER_ILLEGAL/);
    const badGroup = await run("updateSubGroup", "-g", "bad group");
    assert.equal(badGroup.code, 1);
    assert.match(badGroup.stderr, /^nimbus: PARAMETER_ILLEGAL: /);
    assert.deepEqual(await api().getSubGroup("SG2"), before, "nothing was written");
    assert.equal(before.configured, false);
  });

  it("deleteSubGroup -g G removes the config; again: SUBSCRIPTION_GROUP_NOT_EXIST; -r refused", async () => {
    assert.equal((await run("updateSubGroup", "-g", "SG3", "-r", "3")).code, 0);
    const refused = await run("deleteSubGroup", "-g", "SG3", "-r", "true");
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /removeOffset/);
    assert.equal((await api().getSubGroup("SG3")).retryMaxTimes, 3, "the refused delete deleted nothing");
    const r = await run("deleteSubGroup", "-g", "SG3");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "delete subscription group [SG3] from the stage success.\n");
    assert.equal((await api().getSubGroup("SG3")).configured, false);
    const again = await run("deleteSubGroup", "-g", "SG3");
    assert.equal(again.code, 1);
    assert.match(again.stderr, /SUBSCRIPTION_GROUP_NOT_EXIST/);
  });

  it("consumerProgress without -g: every group, its member count, model and diff total, most members first", async () => {
    const a = api();
    await a.send({
      topic: TOPIC,
      brokerName: "broker-a",
      queueId: 0,
      messages: ["1", "2", "3"].map((b) => ({ body: new TextEncoder().encode(b) })),
    });
    await a.commitOffsets("Lagging", TOPIC, [{ brokerName: "broker-a", queueId: 0, offset: 1 }]);
    await a.heartbeat({
      clientId: "live-1",
      consumerDataSet: [{ groupName: "Live", subscriptionDataSet: [{ topic: TOPIC, subString: "*" }] }],
    });
    const r = await run("consumerProgress");
    assert.equal(r.code, 0, r.stderr);
    const rows = tableRows(r.stdout);
    assert.match(r.stdout, /^#Group\s+#Count\s+#Model\s+#Diff Total/);
    assert.deepEqual(rows[0], ["Live", "1", "CLUSTERING", "0"], "the group with members first (no offsets: no diff)");
    assert.ok(
      rows.some((row) => row.join(" ") === "Lagging 0 OFFLINE 2"),
      r.stdout,
    );
    const json = JSON.parse((await run("consumerProgress", "--json")).stdout);
    assert.ok(json.groups.some((g: { group: string; totalLag: number }) => g.group === "Lagging" && g.totalLag === 2));
    const withTopic = await run("consumerProgress", "-t", TOPIC);
    assert.equal(withTopic.code, 2);
    assert.match(withTopic.stderr, /-t and -s need -g/);
  });
});
