/**
 * GET /v1/catalog pages and POST /v1/catalog/batch are assembled from pre-serialized entries:
 * the text is what serializing the route's former object gives (same bytes, same key order),
 * it follows entry updates and reloads, and it matches the documented schemas.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import type { Brand } from "../../src/catalog/built-catalog";
import { BatchResponse, ServiceListResponse } from "../../src/catalog/model";
import { SearchResponse } from "../../src/catalog/search/model";
import { CatalogService } from "../../src/catalog/service";
import { makeApp, type TestApp } from "../support/app";
import { sharedCatalogSource } from "../support/catalog";

const source = sharedCatalogSource();
const built = await source.load();
const builtFile = await source.file();
const catalog = new CatalogService(source);
catalog.use(builtFile);

const pages: [number, number][] = [
  [50, 0],
  [200, 0],
  [1, 5],
  [200, 1000],
  [200, catalog.size - 10],
  [7, catalog.size + 5],
];
// "42" is an integer-like key: an object puts it first, whatever the order asked
const batches = [
  ["github", "stripe", "nope"],
  ["stripe", "42", "__proto__", "github", "constructor"],
  ["x"],
  [],
];

describe("pre-serialized catalog pages and batch", () => {
  test("listJson is list() serialized, byte for byte, and matches ServiceListResponse", () => {
    for (const [limit, offset] of pages) {
      const json = catalog.listJson(limit, offset);
      expect(json).toBe(JSON.stringify(catalog.list(limit, offset)));
      expect(Value.Check(ServiceListResponse, JSON.parse(json))).toBe(true);
    }
  });

  test("batchJson is batch() serialized, byte for byte, and matches BatchResponse", () => {
    for (const slugs of batches) {
      const json = catalog.batchJson(slugs);
      expect(json).toBe(JSON.stringify(catalog.batch(slugs)));
      expect(Value.Check(BatchResponse, JSON.parse(json))).toBe(true);
    }
    expect(Object.keys(JSON.parse(catalog.batchJson(batches[1] as string[])).results)[0]).toBe(
      "42",
    );
  });

  test("an updated entry and a reload show in the next page and batch", () => {
    // a few hundred real brands: installing a reload of the whole catalog writes all of it
    const subset = {
      ...built,
      version: `${built.version}-subset`,
      brands: built.brands.slice(0, 300),
    };
    const c = CatalogService.of(subset.brands, subset.version);
    const first = c.all()[0] as Brand;
    c.listJson(5, 0);
    c.batchJson([first.slug]);
    c.update({ ...first, brandColor: "0a0b0c" });
    expect(JSON.parse(c.listJson(5, 0)).items[0].brandColor).toBe("0a0b0c");
    expect(JSON.parse(c.batchJson([first.slug])).results[first.slug].brandColor).toBe("0a0b0c");
    const next = {
      ...subset,
      version: `${subset.version}-next`,
      brands: subset.brands.filter((b) => b.id !== first.id),
    };
    c.install(next);
    expect(c.version).toBe(next.version);
    expect(JSON.parse(c.listJson(5, 0)).items[0].id).not.toBe(first.id);
    expect(JSON.parse(c.batchJson([first.slug])).notFound).toEqual([first.slug]);
    c.close();
  });
});

describe("through the app", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeApp();
    key = await t.key("free");
  });
  afterAll(() => t.close());

  test("GET /v1/catalog answers the pre-serialized page as JSON", async () => {
    const r = await t.get("/v1/catalog?limit=3&offset=2", key);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(await r.text()).toBe(JSON.stringify(t.deps.catalog.list(3, 2)));
  });

  test("POST /v1/catalog/batch answers the pre-serialized batch, still metered", async () => {
    for (let i = 1; i <= 2; i++) {
      const r = await t.post("/v1/catalog/batch", key, { slugs: [" GitHub", "nope", "github"] });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json;charset=utf-8");
      expect(r.headers.get("x-ratelimit-remaining")).toBe(
        String(Number(r.headers.get("x-ratelimit-limit")) - i),
      );
      expect(await r.text()).toBe(JSON.stringify(t.deps.catalog.batch(["github", "nope"])));
    }
  });

  test("the OpenAPI document still describes the JSON bodies and every status", async () => {
    interface Documented {
      description?: string;
      content: {
        "application/json": { schema: { type: string; properties: Record<string, unknown> } };
      };
    }
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, Documented> }>>;
    };
    const routes: [string, string, string[], Record<string, unknown>][] = [
      [
        "/v1/search",
        "get",
        ["200", "401", "414", "422", "429", "431", "500", "503"],
        SearchResponse,
      ],
      [
        "/v1/catalog",
        "get",
        ["200", "401", "414", "422", "429", "431", "500", "503"],
        ServiceListResponse,
      ],
      [
        "/v1/catalog/batch",
        "post",
        ["200", "401", "413", "414", "422", "429", "431", "500", "503"],
        BatchResponse,
      ],
    ];
    for (const [path, method, statuses, schema] of routes) {
      const responses = doc.paths[path]?.[method]?.responses ?? {};
      expect(Object.keys(responses).sort()).toEqual(statuses);
      const ok = responses["200"] as Documented;
      expect(ok.description).toBe(schema.description as string);
      const documented = ok.content["application/json"].schema;
      expect(documented.type).toBe("object");
      expect(Object.keys(documented.properties)).toEqual(Object.keys(schema.properties as object));
      expect(responses["429"]?.content["application/json"].schema.properties).toHaveProperty(
        "reset_in_seconds",
      );
    }
  });
});
