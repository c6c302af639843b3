/**
 * @module The deployed API is the contract: the routes of infra/manifest.ts are exactly those of
 * ../shared/API.md plus the extensions documented in docs/api.md (both kept in docs/api-routes.json, so a
 * clone without ../shared still checks), and each route goes to the handler module that serves it.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { ALL_FUNCTIONS, API_FUNCTIONS, API_ROUTES } from "../../infra/manifest.js";
import { handlersNamedInInfra, ROOT } from "./infra-source.js";

const RouteList = z.object({ contract: z.array(z.string()), extensions: z.array(z.string()) });
const checkedIn = RouteList.parse(JSON.parse(readFileSync(path.join(ROOT, "docs/api-routes.json"), "utf8")));

/** Route keys written in a markdown page as `` `METHOD /path` ``; query strings (`?topic=T`, `[?…]`) dropped. */
function routesInMarkdown(text: string): string[] {
  return [...text.matchAll(/`(GET|POST|PUT|DELETE|PATCH) (\/[^`\s?[]*)/g)].map((m) => `${m[1]} ${m[2]}`);
}

function assertSameSet(actual: Iterable<string>, expected: Iterable<string>, what: string): void {
  const a = new Set(actual);
  const e = new Set(expected);
  const missing = [...e].filter((k) => !a.has(k));
  const extra = [...a].filter((k) => !e.has(k));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, what);
}

const infraRoutes = API_ROUTES.map((r) => r.route);

describe("infra routes and the API contract", () => {
  it("serves every route once", () => {
    assert.equal(new Set(infraRoutes).size, infraRoutes.length, `duplicate routes in infra/manifest.ts`);
  });

  it("serves exactly the contract plus the documented extensions (docs/api-routes.json)", () => {
    assert.deepEqual(
      checkedIn.contract.filter((k) => checkedIn.extensions.includes(k)),
      [],
      "a route is either contract or extension",
    );
    assertSameSet(
      infraRoutes,
      [...checkedIn.contract, ...checkedIn.extensions],
      "infra/manifest.ts vs docs/api-routes.json",
    );
  });

  it("keeps docs/api-routes.json's contract equal to ../shared/API.md", (t) => {
    const contractPath = path.resolve(ROOT, "../shared/API.md");
    if (!existsSync(contractPath)) {
      t.skip(`${contractPath} is not checked out next to the repo; the checked-in copy stands in for it`);
      return;
    }
    assertSameSet(
      checkedIn.contract,
      routesInMarkdown(readFileSync(contractPath, "utf8")),
      "api-routes.json vs API.md",
    );
  });

  it("documents every route, extensions included, in docs/api.md", () => {
    const apiDoc = path.join(ROOT, "docs/api.md");
    assertSameSet(routesInMarkdown(readFileSync(apiDoc, "utf8")), infraRoutes, "docs/api.md vs infra/manifest.ts");
  });

  it("parses query strings and both arrow styles out of markdown", () => {
    assert.deepEqual(
      routesInMarkdown("- `GET /groups/{group}/progress?topic=T` -> x; `DELETE /t/{t}`.\n- `GET /a[?b=c]` → y"),
      ["GET /groups/{group}/progress", "DELETE /t/{t}", "GET /a"],
    );
  });
});

describe("infra routes and the handlers", () => {
  it("sends each route to the handler module that declares it, and every declared route is deployed", async () => {
    for (const [name, spec] of Object.entries(API_FUNCTIONS)) {
      const file = path.join(ROOT, `${spec.handler.replace(/\.handler$/, "")}.ts`);
      const mod = (await import(pathToFileURL(file).href)) as { routes?: { method: string; path: string }[] };
      assert.ok(Array.isArray(mod.routes), `${spec.handler} exports its routes`);
      const declared = mod.routes.map((r) => `${r.method} ${r.path}`);
      const deployed = API_ROUTES.filter((r) => r.fn === name).map((r) => r.route);
      assertSameSet(deployed, declared, `routes of function ${name} (${spec.handler})`);
    }
  });

  it("names in infra/ exactly the handlers of the manifest (what check:infra bundles is what is deployed)", async () => {
    const named = (await handlersNamedInInfra()).map((h) => `${h.file}.${h.exportName}`);
    assertSameSet(
      named,
      Object.values(ALL_FUNCTIONS).map((f) => f.handler),
      "handler strings in infra/*.ts",
    );
  });
});
