/**
 * @module The protocol is the contract, checked: each endpoint is declared once and well formed; the
 * server serves exactly the declared routes (a served-but-undeclared or declared-but-unserved route fails,
 * canaries included); the OpenAPI document names every route with its schemas, resolves every `$ref`,
 * and the committed copies (docs/openapi.json, docs/api.md's tables) are current.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { z } from "zod";
import { route, serviceRoutes } from "../../lib/http/route.js";
import { ALL_ROUTES, SERVICE_ROUTES } from "../../lib/http/routes/index.js";
import {
  ENDPOINTS,
  endpoint,
  endpoints,
  NO_BODY,
  pathParamNames,
  routeKey,
  SERVICES,
} from "../../lib/protocol/index.js";
import { openApiDocument } from "../../lib/protocol/openapi.js";
import { type Api, api } from "../support/http.js";
import { startTestServer, type TestServer } from "../support/server-fixture.js";
import { assertSameSet } from "../support/sets.js";
import { API_DOC_PATH, expectedFiles, OPENAPI_PATH } from "./generate.js";

const objectKeys = (s: z.ZodType): string[] => (s instanceof z.ZodObject ? Object.keys(s.shape) : []);

describe("the endpoint definitions", () => {
  it("each endpoint is declared once: id = its key, one route key each", () => {
    for (const [key, e] of Object.entries(endpoints)) assert.equal(e.id, key);
    const keys = ENDPOINTS.map(routeKey);
    assert.equal(new Set(keys).size, keys.length, "route keys are unique");
  });

  it("path parameters are exactly the params schema's keys; every service has endpoints", () => {
    for (const e of ENDPOINTS) assertSameSet(objectKeys(e.params), pathParamNames(e.path), routeKey(e));
    assertSameSet(new Set(ENDPOINTS.map((e) => e.service)), SERVICES, "services with endpoints");
  });

  it("GET and DELETE take no body", () => {
    for (const e of ENDPOINTS.filter((x) => x.method === "GET" || x.method === "DELETE"))
      assert.equal(e.body, NO_BODY, routeKey(e));
  });
});

describe("the routes served are the routes declared", () => {
  it("the router serves exactly the declared endpoints, each on its service", () => {
    assertSameSet(
      ALL_ROUTES.map((r) => routeKey(r.endpoint)),
      ENDPOINTS.map(routeKey),
      "served vs declared",
    );
    for (const [service, routes] of Object.entries(SERVICE_ROUTES))
      for (const r of routes) assert.equal(r.endpoint.service, service, routeKey(r.endpoint));
  });

  it("canaries: a service missing a route, serving another's, or serving an undeclared one is refused", () => {
    const send = route(endpoints.send, async () => {
      throw new Error("not called");
    });
    assert.throws(() => serviceRoutes("Send", []), /missing: POST \/send/);
    assert.throws(() => serviceRoutes("Pull", [...SERVICE_ROUTES.Pull, send]), /another service's: POST \/send/);
    const undeclared = endpoint({
      id: "undeclared",
      method: "POST",
      path: "/undeclared",
      service: "Send",
      summary: "not in lib/protocol's list",
      response: z.object({}),
      errors: [],
    });
    const extra = route(undeclared, async () => ({}));
    assert.throws(() => serviceRoutes("Send", [...SERVICE_ROUTES.Send, extra]), /undeclared .*POST \/undeclared/);
    assert.throws(() => serviceRoutes("Send", [send, send]), /once/);
  });

  describe("on the local server", () => {
    let server: TestServer;
    let http: Api;
    before(async () => {
      server = await startTestServer("local");
      http = api(server.url);
    });
    after(() => server.close());

    it("answers every declared route (never 'no route' nor 405) and refuses what is not declared", async () => {
      for (const e of ENDPOINTS) {
        const path = e.path.replace(/\{(\w+)\}/g, "Probe");
        const answer = await http.raw({ method: e.method, path });
        const body = answer.body as { code?: string } | undefined;
        assert.ok(
          answer.status !== 405 && body?.code !== "REQUEST_CODE_NOT_SUPPORTED",
          `${routeKey(e)}: ${answer.status} ${JSON.stringify(body)}`,
        );
      }
      const unknown = await http.get("/not-declared");
      assert.equal(unknown.status, 404);
      assert.equal((unknown.body as { code: string }).code, "REQUEST_CODE_NOT_SUPPORTED");
      const wrongMethod = await http.raw({ method: "PATCH", path: "/send" });
      assert.equal(wrongMethod.status, 405);
    });

    it("serves GET /openapi.json, equal to docs/openapi.json", async () => {
      const served = await http.get("/openapi.json");
      assert.equal(served.status, 200);
      assert.deepEqual(served.body, JSON.parse(readFileSync(OPENAPI_PATH, "utf8")));
    });

    it("bad input to the new route is a 4xx {code, message}", async () => {
      const answer = await http.get("/openapi.json?x=1");
      assert.equal(answer.status, 400);
      assert.equal((answer.body as { code: string }).code, "PARAMETER_ILLEGAL");
    });
  });
});

describe("the OpenAPI document", () => {
  const doc = openApiDocument() as {
    openapi: string;
    paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    components: { schemas: Record<string, unknown> };
  };

  it("is OpenAPI 3.1 and names every route with its request and response schemas", () => {
    assert.equal(doc.openapi, "3.1.0");
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
    );
    assertSameSet(documented, ENDPOINTS.map(routeKey), "paths vs endpoints");
    for (const e of ENDPOINTS) {
      const op = doc.paths[e.path]?.[e.method.toLowerCase()];
      assert.ok(op?.responses["200"], `${routeKey(e)} has a 200 answer schema`);
      assert.equal(op.requestBody !== undefined, e.body !== NO_BODY, `${routeKey(e)} request body`);
      for (const code of e.errors)
        assert.match(JSON.stringify(op.responses), new RegExp(code), `${routeKey(e)} ${code}`);
    }
  });

  it("resolves every $ref to a component schema", () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    assert.ok(refs.length > 20);
    for (const ref of refs) assert.ok(ref !== undefined && ref in doc.components.schemas, `$ref ${ref}`);
    assert.doesNotMatch(JSON.stringify(doc), /#\/\$defs\//, "no dangling $defs refs");
  });
});

describe("the committed copies are current", () => {
  it("docs/openapi.json and docs/api.md's generated tables equal what lib/protocol generates (npm run generate)", () => {
    for (const file of expectedFiles())
      assert.equal(readFileSync(file.path, "utf8"), file.text, `${file.path} is stale`);
  });

  it("docs/api.md describes every route", () => {
    const page = readFileSync(API_DOC_PATH, "utf8");
    const prose = page.replace(/<!-- generated:(\w+) -->[\s\S]*?<!-- \/generated:\1 -->/g, "");
    for (const e of ENDPOINTS)
      assert.ok(prose.includes(`\`${routeKey(e)}`), `docs/api.md's prose names ${routeKey(e)}`);
  });
});
