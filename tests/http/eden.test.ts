import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { treaty } from "@elysiajs/eden";
import type { App } from "../../src/app";
import { makeApp, type TestApp } from "../support/app";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeApp();
  key = await t.key("free");
});
afterAll(() => t.close());

// the README's example: treaty<App>(baseUrl); here the app itself is passed (no socket)
const client = () => treaty<App>(t.app, { headers: { "x-api-key": key } });

describe("Eden treaty client typed by App", () => {
  test("GET /v1/catalog/{slug} is typed as the catalog entry", async () => {
    const { data, error, status } = await client().v1.catalog({ slug: "github" }).get();
    expect(error).toBeNull();
    expect(status).toBe(200);
    // compile-time: tsc refuses these lines if data is typed as a string
    const name: string | undefined = data?.name;
    const color: string | null | undefined = data?.brandColor;
    const id: number | undefined = data?.id;
    expect({ name, color, id }).toEqual({
      name: "GitHub",
      color: expect.stringMatching(/^[0-9a-f]{6}$/),
      id: expect.any(Number),
    });
  });

  test("the list, search and batch routes are typed too; errors carry the body", async () => {
    const api = client();
    const list = await api.v1.catalog.get({ query: { limit: 2, offset: 0 } });
    const items: { slug: string }[] | undefined = list.data?.items;
    expect(items).toHaveLength(2);
    const found = await api.v1.search.get({ query: { q: "github", limit: 5 } });
    expect(found.data?.matches.map((m) => m.slug)).toContain("github");
    const batch = await api.v1.catalog.batch.post({ slugs: ["github", "no-such-brand-x"] });
    expect(batch.data?.notFound).toEqual(["no-such-brand-x"]);
    const missing = await api.v1.catalog({ slug: "no-such-brand-x" }).get();
    expect(missing.status).toBe(404);
    expect(missing.error?.value).toMatchObject({ error: "service_not_found" });
  });
});
