import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, type TestApp } from "../support/app";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = Record<string, any>;

let t: TestApp;
let doc: Json;
beforeAll(async () => {
  t = await makeApp();
  const res = await t.req("/swagger/json");
  expect(res.status).toBe(200);
  doc = (await res.json()) as Json;
});
afterAll(() => t.close());

/** Every operation as [label, operation]. */
function operations(): [string, Json][] {
  const ops = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]): [string, Json] => [`${method} ${path}`, op]),
  );
  // every check over the operations would pass on an empty document
  expect(ops.length).toBeGreaterThan(0);
  return ops;
}

/** JSON paths of the objects anywhere in the document that match. */
function where(match: (o: Json) => boolean): string[] {
  return [...objects(doc)].filter(([, o]) => match(o)).map(([at]) => at);
}

/** Every object nested anywhere in a value, with its JSON path. */
function* objects(node: unknown, at = "$"): Generator<[string, Json]> {
  if (typeof node !== "object" || node === null) return;
  if (!Array.isArray(node)) yield [at, node as Json];
  for (const [k, v] of Object.entries(node)) yield* objects(v, `${at}.${k}`);
}

const JSON_ROUTES = [
  "get /healthz",
  "get /readyz",
  "get /v1/catalog",
  "post /v1/catalog/batch",
  "get /v1/catalog/{slug}",
  "get /v1/search",
  "get /v1/brand",
  "get /v1/usage",
  "get /v1/analytics/usage",
];

describe("OpenAPI document", () => {
  test("declares OpenAPI 3.1, whose schema dialect has type null, const and no nullable", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(where((o) => "nullable" in o && typeof o.nullable !== "object")).toEqual([]);
    expect(where((o) => o.type === "null").length).toBeGreaterThan(0);
  });

  test("info.license names the terms with a 3.1 SPDX identifier (Redocly's info-license)", () => {
    expect(doc.info.license).toEqual({
      name: expect.stringContaining("Proprietary"),
      identifier: "LicenseRef-Proprietary",
    });
  });

  test("the catalog list is documented at /v1/catalog, and both spellings still answer", async () => {
    expect(doc.paths["/v1/catalog"]?.get).toBeDefined();
    expect(doc.paths["/v1/catalog/"]).toBeUndefined();
    expect(Object.keys(doc.paths).filter((p) => p.length > 1 && p.endsWith("/"))).toEqual([]);
    const key = await t.key();
    for (const path of ["/v1/catalog?limit=1", "/v1/catalog/?limit=1"]) {
      const res = await t.get(path, key);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { items: unknown[] }).items).toHaveLength(1);
    }
  });

  test("defaulted query parameters are optional, with one integer schema and the real bounds", () => {
    const param = (path: string, name: string) =>
      (doc.paths[path].get.parameters as Json[]).find((p) => p.name === name && p.in === "query");
    const expected: [string, string, Json][] = [
      ["/v1/catalog", "limit", { type: "integer", minimum: 1, maximum: 200, default: 50 }],
      ["/v1/catalog", "offset", { type: "integer", minimum: 0, maximum: 1e9, default: 0 }],
      ["/v1/search", "limit", { type: "integer", minimum: 1, maximum: 50, default: 20 }],
      ["/v1/png/{slug}", "size", { type: "integer", minimum: 16, maximum: 2048, default: 256 }],
      ["/v1/webp/{slug}", "size", { type: "integer", minimum: 16, maximum: 2048, default: 256 }],
    ];
    for (const [path, name, schema] of expected) {
      const p = param(path, name);
      expect(p?.required).toBe(false);
      expect(p?.schema).toMatchObject(schema);
      expect(p?.schema.anyOf).toBeUndefined();
    }
    for (const path of ["/v1/svg/{slug}", "/v1/png/{slug}", "/v1/webp/{slug}"]) {
      expect(param(path, "variant")).toMatchObject({
        required: false,
        schema: { default: "mono" },
      });
    }
    const defaultedButRequired = operations().flatMap(([label, op]) =>
      ((op.parameters ?? []) as Json[])
        .filter((p) => p.schema?.default !== undefined && p.required !== false)
        .map((p) => `${label} ${p.name}`),
    );
    expect(defaultedButRequired).toEqual([]);
  });

  test("integers are plain integers, never Elysia's string-or-integer union", () => {
    expect(where((o) => o.format === "integer" || o.format === "numeric")).toEqual([]);
    const props = (path: string, method: string, status: string) =>
      doc.paths[path][method].responses[status].content["application/json"].schema.properties;
    const list = props("/v1/catalog", "get", "200");
    for (const k of ["total", "limit", "offset"]) expect(list[k]).toEqual({ type: "integer" });
    expect(list.items.items.properties.id).toMatchObject({ type: "integer" });
    expect(props("/v1/catalog", "get", "429").reset_in_seconds).toEqual({ type: "integer" });
    expect(props("/v1/search", "get", "200").total.type).toBe("integer");
    expect(props("/v1/brand", "get", "200").id.type).toBe("integer");
  });

  test("every response has a description", () => {
    const missing = operations().flatMap(([label, op]) =>
      Object.entries(op.responses as Json)
        .filter(([, r]) => typeof r.description !== "string" || r.description === "")
        .map(([status]) => `${label} ${status}`),
    );
    expect(missing).toEqual([]);
  });

  test("JSON routes list only application/json; image routes keep their image type", () => {
    for (const [label, op] of operations()) {
      // a body of image bytes a route also takes (pinned artwork) is listed beside JSON
      const body = Object.keys(op.requestBody?.content ?? {}).filter(
        (t) => !t.startsWith("image/"),
      );
      const contents = [
        ...(body.length ? [body] : []),
        ...Object.values(op.responses as Json).map((r) => Object.keys(r.content ?? {})),
      ].filter((types) => types.length) as string[][];
      for (const types of contents) {
        if (types.includes("application/json"))
          expect({ label, types }).toEqual({ label, types: ["application/json"] });
      }
    }
    const pin = doc.paths["/admin/brands/{slug}/artwork/{variant}"].put;
    expect(Object.keys(pin.requestBody.content).sort()).toEqual([
      "application/json",
      "image/png",
      "image/svg+xml",
    ]);
    expect(JSON_ROUTES.filter((r) => !operations().some(([label]) => label === r))).toEqual([]);
    const batch = doc.paths["/v1/catalog/batch"].post;
    expect(Object.keys(batch.requestBody.content)).toEqual(["application/json"]);
    for (const [path, type] of [
      ["/v1/svg/{slug}", "image/svg+xml"],
      ["/v1/png/{slug}", "image/png"],
      ["/v1/webp/{slug}", "image/webp"],
    ] as const) {
      const responses = doc.paths[path].get.responses;
      expect(Object.keys(responses["200"].content)).toEqual([type]);
      expect(Object.keys(responses["404"].content)).toEqual(["application/json"]);
    }
  });

  test("/readyz documents its report for 200 and 503", async () => {
    const op = doc.paths["/readyz"].get;
    for (const status of ["200", "503"]) {
      const schema = op.responses[status].content["application/json"].schema;
      expect(schema.required).toEqual(expect.arrayContaining(["status", "catalog", "store"]));
      expect(schema.properties.status.anyOf.map((s: Json) => s.const)).toEqual([
        "ready",
        "not_ready",
      ]);
      expect(Object.keys(schema.properties.catalog.properties).sort()).toEqual([
        "brands",
        "loaded",
        "version",
      ]);
      expect(schema.properties.catalog.properties.brands.type).toBe("integer");
      expect(Object.keys(schema.properties.store.properties).sort()).toEqual(["kind", "reachable"]);
    }
    // the real answer still fits
    const body = (await (await t.req("/readyz")).json()) as Json;
    expect(Object.keys(body).sort()).toEqual([
      "catalog",
      "counters",
      "draining",
      "status",
      "store",
      "usage",
    ]);
    expect(body.draining).toBe(false);
    expect(body.catalog).toEqual({
      loaded: true,
      brands: t.deps.catalog.size,
      version: t.deps.catalog.version,
    });
  });

  test("/healthz and /readyz are public; /v1 routes keep the global API key", () => {
    expect(doc.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    expect(doc.paths["/readyz"].get.security).toEqual([]);
    expect(doc.paths["/v1/catalog"].get.security).toBeUndefined();
  });

  test("no $id, and every $ref resolves to a registered component", () => {
    const schemas = (doc.components?.schemas ?? {}) as Json;
    expect(where((o) => typeof o.$id === "string")).toEqual([]);
    const dangling = (o: Json) =>
      typeof o.$ref === "string" && !(o.$ref.replace("#/components/schemas/", "") in schemas);
    expect(where(dangling)).toEqual([]);
    const brand200 = doc.paths["/v1/brand"].get.responses["200"];
    expect(Object.keys(brand200).sort()).toEqual(["content", "description"]);
  });
});
