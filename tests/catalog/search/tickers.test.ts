/**
 * Stock tickers (fixtures/listed-companies.json, from pytickersymbols) through GET /v1/search
 * with the real built catalog.
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
