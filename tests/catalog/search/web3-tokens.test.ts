/**
 * Crypto tokens, networks and exchanges (@web3icons/core) through GET /v1/search with the real
 * built catalog: found by name and by ticker symbol, where the symbol is no listed company's
 * stock ticker (stock tickers win) and no other brand's name.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, type TestApp } from "../../support/app";

let t: TestApp;
let key: string;

const search = async (q: string) => {
  const r = await t.get(`/v1/search?q=${encodeURIComponent(q)}`, key);
  expect(r.status).toBe(200);
  return ((await r.json()) as { matches: { slug: string }[] }).matches.map((m) => m.slug);
};

beforeAll(async () => {
  t = await makeApp();
  key = await t.key("pro");
});
afterAll(() => t.close());

describe("tokens by name and by symbol", () => {
  test("a token only web3icons draws is found by its name and by its symbol", async () => {
    expect((await search("Arbitrum"))[0]).toBe("arbitrum");
    expect((await search("ARB"))[0]).toBe("arbitrum");
    expect((await search("mkr"))[0]).toBe("maker");
  });
  test("a merged brand answers to its token's symbol", async () => {
    expect((await search("DOGE"))[0]).toBe("dogecoin");
    expect((await search("KCS"))[0]).toBe("kucoin");
  });
  test("a listed company's stock ticker is not a token's alias", async () => {
    // SOL is Solvay's ticker (FRA:SOL), UNI Unicaja's (UNI.MC): neither finds the token first
    expect((await search("SOL"))[0]).not.toBe("solana");
    expect((await search("Solana"))[0]).toBe("solana");
    expect(await search("UNI")).not.toContain("uniswap");
    expect((await search("uniswap"))[0]).toBe("uniswap");
  });
  test("namesakes stay apart: KrakenD's Kraken and the Kraken exchange are two results", async () => {
    const kraken = (await search("kraken")).slice(0, 2);
    expect(kraken.sort()).toEqual(["kraken", "kraken-exchange"]);
  });
});

describe("a company's name finds the company before a crypto token", () => {
  test("a token named like a company comes after it", async () => {
    const cases: [string, string, string][] = [
      ["atari", "atari", "atari-token"],
      ["kraken", "kraken", "kraken-exchange"],
      ["xai", "xai", "xai-network"],
      ["sonic", "sonic", "sonic-network"],
      ["carbon", "carbon", "carbon-token"],
    ];
    for (const [q, company, token] of cases) {
      const found = await search(q);
      expect([q, found[0]]).toEqual([q, company]);
      expect(found).toContain(token);
    }
  });
  test("a token is never a typo match: unicef is not the Unidef token", async () => {
    expect(await search("unicef")).toEqual([]);
    expect((await search("unidef"))[0]).toBe("unidef");
  });
  test("no company named like a token answers the token first", () => {
    const all = t.deps.catalog.all();
    const isToken = (b: { sources: string[] }) =>
      b.sources.length === 1 && b.sources[0] === "web3icons";
    const bySlug = new Map(all.map((b) => [b.slug, b]));
    const tokenNames = new Set(all.filter(isToken).map((b) => b.name.toLowerCase()));
    const names = [
      ...new Set(all.filter((b) => !isToken(b)).map((b) => b.name.toLowerCase())),
    ].filter((n) => tokenNames.has(n));
    expect(names.length).toBeGreaterThan(20);
    const tokenFirst = names.filter((q) => {
      const top = t.deps.search.search(q, 1)[0];
      return top !== undefined && isToken(bySlug.get(top.slug) ?? top);
    });
    expect(tokenFirst).toEqual([]);
  });
});
