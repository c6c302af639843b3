/**
 * @module Per-stage settings (lib/config/stages.ts) and the shape of sst.config.ts: production is guarded,
 * every other stage is disposable, and the app file stays thin (it only imports infra/ and the stages).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { NimbusConfigSchema } from "../../lib/config/nimbus-config.js";
import { NAMED_STAGE_NAMES, StageSettingsSchema, stageSettings } from "../../lib/config/stages.js";
import { ROOT } from "./infra-source.js";

describe("stage settings", () => {
  it("guards production: retained, protected, ACL auth, topics created on purpose", () => {
    const prod = stageSettings("production");
    assert.equal(prod.production, true);
    assert.equal(prod.auth, "acl");
    assert.equal(prod.nimbus.autoCreateTopic, false);
    assert.ok(prod.nimbus.retentionHours >= 1);
  });

  it("gives any other stage name the disposable defaults", () => {
    for (const stage of ["ci", "alice", "pr-123"]) {
      const s = stageSettings(stage);
      assert.equal(s.production, false, stage);
      assert.deepEqual(s.consoleOrigins, [], `${stage}: no console origins besides its own console site`);
    }
  });

  it("holds a complete, valid NimbusConfig for every named stage and the default", () => {
    for (const stage of [...NAMED_STAGE_NAMES, "some-dev-stage"]) {
      const { nimbus } = stageSettings(stage);
      assert.deepEqual(NimbusConfigSchema.parse(nimbus), nimbus, `${stage}: already parsed, defaults filled in`);
      assert.ok(nimbus.brokers.length > 0, stage);
    }
  });

  it("rejects what AWS would reject later", () => {
    const base = { region: "us-east-1", production: false, auth: "acl", nimbus: {} };
    assert.ok(StageSettingsSchema.safeParse(base).success);
    for (const bad of [
      { ...base, region: "us-east" },
      { ...base, consoleOrigins: ["https://console.example.com/"] },
      { ...base, nimbus: { retentionHours: 0.5 } },
      { ...base, extra: true },
    ]) {
      assert.equal(StageSettingsSchema.safeParse(bad).success, false, JSON.stringify(bad));
    }
  });
});

describe("the gRPC endpoint's remoting door (grpc.remoting)", () => {
  const grpc = {
    domain: "mq.example.com",
    certificateArn: "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000",
  };
  const stage = (auth: string, remoting?: string) => ({
    region: "us-east-1",
    production: false,
    auth,
    nimbus: {},
    grpc: { ...grpc, ...(remoting === undefined ? {} : { remoting }) },
  });

  it("is tls or tcp, off by default, and tls only on an ACL stage (4.x signatures never cross in clear)", () => {
    assert.equal(StageSettingsSchema.parse(stage("acl")).grpc?.remoting, undefined);
    assert.equal(StageSettingsSchema.parse(stage("public", "tls")).grpc?.remoting, "tls");
    assert.equal(StageSettingsSchema.parse(stage("iam", "tcp")).grpc?.remoting, "tcp");
    assert.equal(StageSettingsSchema.safeParse(stage("public", "udp")).success, false);
    assert.equal(StageSettingsSchema.parse(stage("acl", "tls")).grpc?.remoting, "tls");
    assert.equal(StageSettingsSchema.safeParse(stage("acl", "tcp")).success, false);
  });
});

describe("two regions: a master stage with replicas and a slave cell", () => {
  const master = {
    region: "us-east-1",
    production: true,
    auth: "acl",
    nimbus: {},
    replicas: [{ region: "us-west-2", bucket: "nimbus-dr-messages" }],
  };
  const cell = {
    region: "us-west-2",
    production: true,
    auth: "acl",
    nimbus: { brokers: [{ brokerName: "broker-a", brokerId: 1, perm: 4 }] },
    cell: {
      brokerName: "broker-a",
      brokerId: 1,
      nameServer: {
        region: "us-east-1",
        routesTable: "nimbus-production-RoutesTable",
        clientsTable: "nimbus-production-ClientsTable",
      },
      replicaOf: {
        queueIndexTable: "nimbus-production-QueueIndexTable",
        offsetsTable: "nimbus-production-OffsetsTable",
      },
    },
  };

  it("parses both; a cell reads the name server's tables from its own replicas unless it names their region", () => {
    assert.ok(StageSettingsSchema.safeParse(master).success);
    assert.ok(StageSettingsSchema.safeParse(cell).success);
    const { region: _r, ...local } = cell.cell.nameServer;
    assert.ok(StageSettingsSchema.safeParse({ ...cell, cell: { ...cell.cell, nameServer: local } }).success);
  });

  it("refuses a cell that serves another broker, a master (id 0), holds replicas, or a replica in its own region", () => {
    for (const bad of [
      { ...cell, nimbus: { brokers: [{ brokerName: "broker-b", brokerId: 1 }] } },
      { ...cell, cell: { ...cell.cell, brokerId: 0 } },
      { ...cell, replicas: [{ region: "eu-west-1" }] },
      { ...master, replicas: [{ region: "us-east-1" }] },
      { ...cell, cell: { ...cell.cell, replicaOf: undefined } },
    ]) {
      assert.equal(StageSettingsSchema.safeParse(bad).success, false, JSON.stringify(bad));
    }
  });
});

describe("sst.config.ts", () => {
  const source = readFileSync(path.join(ROOT, "sst.config.ts"), "utf8");

  it("has no top-level imports (SST evaluates it before installing anything) and imports only infra/ and the stages", () => {
    assert.doesNotMatch(source, /^import\s/m);
    const imported = [...source.matchAll(/import\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]);
    assert.ok(imported.length > 0);
    for (const spec of imported) assert.match(spec ?? "", /^\.\/(infra\/[\w-]+|lib\/config\/stages)\.js$/);
  });

  it("retains and protects production stages only", () => {
    assert.match(source, /removal: stage\.production \? "retain" : "remove"/);
    assert.match(source, /protect: stage\.production/);
  });
});
