/**
 * Names other than the brand's own through GET /v1/search with the real built catalog: stock
 * tickers (fixtures/listed-companies.json, from pytickersymbols) and the brand's name in its
 * own script (name-suggestion-index `brand:ja`/`brand:ko`/`brand:zh`... tags, simple-icons
 * `aliases.loc`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;

const top = async (q: string) => {
  const r = await t.get(`/v1/search?q=${encodeURIComponent(q)}`, key);
  expect(r.status).toBe(200);
  const body = (await r.json()) as { matches: { slug: string }[] };
  return body.matches[0]?.slug;
};

beforeAll(async () => {
  t = await makeApp();
  key = await t.key("pro");
});
afterAll(() => t.close());

describe("tickers find the company first", () => {
  test("US symbols, in any case: AAPL, NVDA, msft, TSLA", async () => {
    expect(await top("AAPL")).toBe("apple");
    expect(await top("NVDA")).toBe("nvidia");
    expect(await top("msft")).toBe("microsoft");
    expect(await top("TSLA")).toBe("tesla");
  });
  test("exchange-suffixed and exchange-qualified forms: 7203.T, TYO:7203, BMW.DE, NASDAQ:AAPL", async () => {
    expect(await top("7203.T")).toBe("toyota");
    expect(await top("TYO:7203")).toBe("toyota");
    expect(await top("BMW.DE")).toBe("bmw");
    expect(await top("NASDAQ:AAPL")).toBe("apple");
  });
  test("a brand's own name still wins over another company's ticker", async () => {
    // NOW is ServiceNow's ticker and the name of the NOW TV brand
    expect(await top("now")).toBe("now");
    expect(await top("KO")).toBe("cocacola");
  });
});

describe("native-script names find the brand", () => {
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
});
