/**
 * @module The chaos checker's short run, in `npm test`: both storage modes under every kind of fault,
 * fewer messages than `npm run chaos`. No timing assertion: only what the checker counts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ChaosOptions, type ChaosReport, runAwsChaos, runLocalChaos } from "./chaos.js";

const SHORT: ChaosOptions = { messages: 600, producers: 4, queues: 3, faultRate: 0.06, killRate: 0.1, serverKills: 2 };

function assertSound(report: ChaosReport): void {
  const detail = JSON.stringify(report);
  assert.equal(report.acked, report.messages, `every message was acknowledged in the end: ${detail}`);
  assert.equal(report.lost, 0, `acked messages lost: ${detail}`);
  assert.equal(report.doubleAssigned, 0, `offsets assigned twice: ${detail}`);
  assert.equal(report.gaps, 0, `gaps or unreadable ranges: ${detail}`);
  assert.ok(report.stored >= report.messages, detail);
  assert.equal(report.stored - report.duplicates, report.messages, `every message stored, copies apart: ${detail}`);
}

/**
 * Faults were injected: the forced kill between an object PUT and its index put, and faults of the random
 * kinds. A short run is too short to count on every random kind coming up (each has a few percent a call);
 * the fault wrappers' kinds are each covered by test/contract/queue-log-faults.test.ts, and the long run
 * reports every count.
 */
function assertFaultsInjected(report: ChaosReport): void {
  const { producerKillsBetweenObjectAndIndex: kills = 0, serverKills: _s, ...random } = report.faults;
  assert.ok(kills > 0, `no producer killed between object PUT and index put: ${JSON.stringify(report)}`);
  const injected = Object.values(random).reduce((a, b) => a + b, 0);
  assert.ok(injected > 0, `no random fault injected: ${JSON.stringify(report)}`);
}

describe("chaos (short run)", () => {
  it("embedded store: producer processes with port faults and self-kills, a local server killed twice", async (t) => {
    const report = await runLocalChaos(SHORT);
    t.diagnostic(JSON.stringify(report));
    assertSound(report);
    assert.ok(
      report.orphanObjectsFound >= (report.faults.producerKillsBetweenObjectAndIndex ?? 0),
      "each kill between an object PUT and its index put left an orphan",
    );
    assert.equal(report.orphanObjectsLeft, 0, "garbage collection left no orphan");
    assert.equal(report.tempFilesLeft, 0);
    assertFaultsInjected(report);
  });

  it("DynamoDB/S3 emulators behind fault proxies: SDK retries, throttling, late writes, self-kills", async (t) => {
    const report = await runAwsChaos(SHORT);
    t.diagnostic(JSON.stringify(report));
    assertSound(report);
    assertFaultsInjected(report);
  });
});
