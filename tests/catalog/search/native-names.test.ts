/**
 * A brand's name in its own script (name-suggestion-index `brand:ja`/`brand:ko`/`brand:zh`...
 * tags, simple-icons `aliases.loc`) through GET /v1/search with the real built catalog.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;

const top = async (q: string) => {
  const r = await t.get(`/v1/search?q=${encodeURIComponent(q)}`, key);
  expect(r.status).toBe(200);
  return ((await r.json()) as { matches: { slug: string }[] }).matches[0]?.slug;
};

beforeAll(async () => {
  t = await makeApp();
  key = await t.key("pro");
});
afterAll(() => t.close());

test("Japanese, Korean and Chinese names from name-suggestion-index find the brand", async () => {
  expect(await top("スターバックス")).toBe("starbucks");
  expect(await top("セブン-イレブン")).toBe("7-eleven");
  expect(await top("세븐일레븐")).toBe("7-eleven");
  expect(await top("ファミリーマート")).toBe("familymart");
  expect(await top("全家")).toBe("familymart");
});

test("simple-icons' localized names find the brand", async () => {
  expect(await top("ライン")).toBe("line");
  expect(await top("카카오톡")).toBe("kakaotalk");
  expect(await top("美团")).toBe("meituan");
});
