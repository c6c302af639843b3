/**
 * @module The deployed API is the protocol: infra/manifest.ts deploys exactly the endpoints of lib/protocol,
 * each on the function of its service, and each function's handler module serves that service.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import {
  ALL_FUNCTIONS,
  API_FUNCTIONS,
  API_ROUTES,
  type ApiFunctionName,
  CHANNEL_ROUTES,
  channelRouteProtection,
  functionAuthEnvironment,
  reservedConcurrency,
  routeProtection,
  stageReservedConcurrency,
  TABLES,
} from "../../infra/manifest.js";
import { BROKER_TABLES } from "../../lib/broker/store/tables.js";
import {
  ACCOUNT_RESERVABLE_CONCURRENCY,
  CONTAINERS_PER_HOT_QUEUE,
  HOT_QUEUE_APPENDS_PER_SECOND,
  NAMED_STAGE_NAMES,
  StageSettingsSchema,
  sendConcurrencyFor,
  stageSettings,
} from "../../lib/config/stages.js";
import { ENDPOINTS, routeKey, SERVICES } from "../../lib/protocol/index.js";
import { assertSameSet } from "../support/sets.js";
import { handlersNamedInInfra, ROOT } from "./infra-source.js";

describe("infra routes and the protocol", () => {
  it("deploys every endpoint of lib/protocol once, and nothing else", () => {
    const deployed = API_ROUTES.map((r) => r.route);
    assert.equal(new Set(deployed).size, deployed.length, "duplicate routes in infra/manifest.ts");
    assertSameSet(deployed, ENDPOINTS.map(routeKey), "infra/manifest.ts vs lib/protocol");
  });

  it("puts each endpoint on its service's function, open only where the endpoint needs no auth", () => {
    for (const e of ENDPOINTS) {
      const spec = API_ROUTES.find((r) => r.route === routeKey(e));
      assert.equal(spec?.fn, e.service, routeKey(e));
      assert.equal(spec?.public === true, e.auth === "none", `${routeKey(e)} is public iff its auth is none`);
    }
  });

  it("has one function per service, and each handler module serves its function's service", async () => {
    assertSameSet(Object.keys(API_FUNCTIONS), SERVICES, "API_FUNCTIONS vs the protocol's services");
    for (const [name, spec] of Object.entries(API_FUNCTIONS)) {
      const file = path.join(ROOT, `${spec.handler.replace(/\.handler$/, "")}.ts`);
      const mod = (await import(pathToFileURL(file).href)) as { handler?: { service?: string } };
      assert.equal(mod.handler?.service, name, `${spec.handler} serves service ${name}`);
    }
  });

  it("provisions exactly the broker's tables, with their key types and TTL attributes", () => {
    const provisioned = ({ name, sortKeyType, ttlAttribute }: (typeof BROKER_TABLES)[number]) => ({
      name,
      sortKeyType,
      ttlAttribute,
    });
    assert.deepEqual(TABLES.map(provisioned), BROKER_TABLES.map(provisioned));
  });

  it("names in infra/ exactly the handlers of the manifest (what check:infra bundles is what is deployed)", async () => {
    const named = (await handlersNamedInInfra()).map((h) => `${h.file}.${h.exportName}`);
    assertSameSet(
      named,
      Object.values(ALL_FUNCTIONS).map((f) => f.handler),
      "handler strings in infra/*.ts",
    );
  });

  it("requires auth on every route of every stage but GET /health, unless the stage's settings say public", () => {
    for (const stage of [...NAMED_STAGE_NAMES, "alice", "ci", "pr-123"]) {
      const settings = stageSettings(stage);
      assert.notEqual(settings.auth, "public", `${stage} is not public unless its settings say so`);
      for (const route of API_ROUTES) {
        const protection = routeProtection(settings, route);
        if (route.public === true) assert.equal(protection, "none", route.route);
        else assert.notEqual(protection, "none", `${stage}: ${route.route} requires auth`);
      }
      // The push channel: its connect is checked as the stage's HTTP routes are; on `acl` its frames too.
      for (const route of CHANNEL_ROUTES) {
        const protection = channelRouteProtection(settings, route);
        if (route === "$connect" || settings.auth === "acl")
          assert.equal(protection, settings.auth, `${stage}: channel ${route} follows the stage's auth`);
      }
      if (settings.auth === "acl") assert.deepEqual(functionAuthEnvironment(settings), { NIMBUS_AUTH: "acl" });
      for (const fn of Object.keys(API_FUNCTIONS) as ApiFunctionName[])
        assert.ok(reservedConcurrency(settings, fn) >= 1, `${stage}: ${fn} has a reserved concurrency`);
      assert.ok(settings.limits.rateLimit > 0 && settings.limits.burstLimit > 0, `${stage} is throttled`);
    }
    // Only a stage that asks for it is public.
    const open = StageSettingsSchema.parse({ region: "us-east-1", production: false, auth: "public", nimbus: {} });
    assert.ok(API_ROUTES.every((r) => routeProtection(open, r) === "none"));
    assert.ok(CHANNEL_ROUTES.every((r) => channelRouteProtection(open, r) === "none"));
    const iam = StageSettingsSchema.parse({ region: "us-east-1", production: false, auth: "iam", nimbus: {} });
    assert.deepEqual(
      CHANNEL_ROUTES.map((r) => channelRouteProtection(iam, r)),
      ["iam", "none", "none"],
      "API Gateway checks IAM once, on $connect; the other routes ride on that connection",
    );
    assert.deepEqual(functionAuthEnvironment(open), { NIMBUS_AUTH: "off" });
    const unset = StageSettingsSchema.parse({ region: "us-east-1", production: false, nimbus: {} });
    assert.equal(unset.auth, "acl", "a stage that says nothing gets auth");
  });

  it("sizes every stage's limits from the hot-queue ceiling, within what an account can reserve", () => {
    // 1,000 write units per key / 2 per 1 KiB item: the ceiling the lambda-concurrency benchmark reached.
    assert.equal(HOT_QUEUE_APPENDS_PER_SECOND, 500);
    assert.equal(CONTAINERS_PER_HOT_QUEUE, 10);
    for (const stage of [...NAMED_STAGE_NAMES, "some-dev-stage"]) {
      const settings = stageSettings(stage);
      const send = reservedConcurrency(settings, "Send");
      assert.ok(send >= sendConcurrencyFor(settings.limits.rateLimit), `${stage}: Send serves the stage's rate at p99`);
      assert.ok(settings.limits.burstLimit >= settings.limits.rateLimit, `${stage}: a burst holds at least a second`);
      const reserved = stageReservedConcurrency(settings);
      assert.ok(reserved <= ACCOUNT_RESERVABLE_CONCURRENCY, `${stage} reserves ${reserved}: over the account's 900`);
    }
    // The old production limits (100 per function, Send and Pull 200) reserved more than an account has.
    const old = StageSettingsSchema.parse({
      region: "us-east-1",
      production: true,
      nimbus: {},
      limits: {
        rateLimit: 2000,
        burstLimit: 4000,
        reservedConcurrency: 100,
        functionConcurrency: { Send: 200, Pull: 200 },
      },
    });
    // n API functions: Send and Pull at 200, the others at 100, plus 100 for the rest of the stack.
    const n = Object.keys(API_FUNCTIONS).length;
    assert.equal(stageReservedConcurrency(old), 2 * 200 + (n - 2) * 100 + 100);
    assert.ok(stageReservedConcurrency(old) > ACCOUNT_RESERVABLE_CONCURRENCY);
    // Production: Send 200, Pull 200, NameServer and Offsets 50, the other API functions and the rest 20 each.
    assert.equal(stageReservedConcurrency(stageSettings("production")), 200 + 200 + 50 + 50 + (n - 4) * 20 + 20);
  });

  it("wires the protection in infra/: api.ts routes by routeProtection, functions.ts sets NIMBUS_AUTH, auth.ts warns", () => {
    const source = (file: string) => readFileSync(path.join(ROOT, "infra", file), "utf8");
    assert.match(source("api.ts"), /routeProtection\(settings, spec\)/);
    assert.match(source("api.ts"), /throttlingRateLimit: settings\.limits\.rateLimit/);
    assert.match(source("functions.ts"), /functionAuthEnvironment\(settings\)/);
    assert.match(source("functions.ts"), /concurrency: \{ reserved: api\.reservedConcurrency \}/);
    assert.match(source("auth.ts"), /console\.warn\([\s\S]*PUBLIC API/);
    // The channel function gets the API functions' auth environment (the 4th argument) and routes by stage.
    assert.match(source("channel.ts"), /createFunction\("Channel", CHANNEL_FUNCTIONS\.Channel, api\.url, \{/);
    assert.match(source("channel.ts"), /channelRouteProtection\(settings, route\)/);
  });
});
