import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeApp();
  key = await t.key();
});
afterAll(() => t.close());

interface NotFound {
  error: string;
  message: string;
  suggestions?: string[];
}

describe("404 service_not_found: did you mean", () => {
  test("a near-miss slug gets the slugs it probably meant, and keeps { error, message }", async () => {
    for (const path of ["/v1/catalog/git-hub", "/v1/svg/git-hub", "/v1/png/git-hub?size=64"]) {
      const r = await t.get(path, key);
      expect(r.status).toBe(404);
      const body = (await r.json()) as NotFound;
      expect(body.error).toBe("service_not_found");
      expect(body.message).toBe('No catalog entry with slug "git-hub".');
      expect(body.suggestions?.[0]).toBe("github");
      expect(body.suggestions?.length).toBeLessThanOrEqual(3);
    }
  });

  test("a slug that resembles nothing has no suggestions field", async () => {
    const r = await t.get("/v1/catalog/qqxzvvk", key);
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual({
      error: "service_not_found",
      message: 'No catalog entry with slug "qqxzvvk".',
    });
  });

  test("the OpenAPI document describes the optional suggestions field", async () => {
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
    };
    const r404 = JSON.stringify(doc.paths["/v1/catalog/{slug}"]?.get.responses["404"]);
    expect(r404).toContain("suggestions");
  });
});
