/** @web3icons/core: reading its modules, the exclusions, the licence guard and the merge, on its real data. */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SOURCE_LICENCES } from "../../../scripts/catalog/sources";
import {
  blackMono,
  derivativeOf,
  exclusion,
  loadWeb3Icons,
  packageLicence,
  parseMetadataModule,
  parseSvgModule,
  type Web3Icon,
} from "../../../scripts/catalog/web3icons";
import {
  loadWeb3Decisions,
  mergeWeb3,
  readsOnBothSurfaces,
  stockTickers,
} from "../../../scripts/catalog/web3icons-merge";
import { builtCatalog } from "../../support/catalog";
import { tempDir } from "../../support/temp";
import { draft } from "./steps/draft";

const ROOT = resolve(import.meta.dir, "../../..");
const SVGS = join(ROOT, "node_modules/@web3icons/core/dist/svgs");
const loaded = loadWeb3Icons(ROOT);
const real = (file: string) => loaded.icons.find((i) => i.file === file) as Web3Icon;

describe("web3icons modules", () => {
  test("metadata modules are read as data: quotes, bare keys, trailing commas", () => {
    const text = `const tokens = [\n  {\n    id: 'a-b',\n    filePath: 'token:AB',\n    symbol: 'ab',\n    name: "Bob's Coin",\n    marketCapRank: null,\n    addresses: { 'polygon-pos': '0x1', },\n    variants: ['branded', 'mono'],\n  },\n]\nexport { tokens }\n`;
    expect(parseMetadataModule(text) as unknown[]).toEqual([
      {
        id: "a-b",
        filePath: "token:AB",
        symbol: "ab",
        name: "Bob's Coin",
        marketCapRank: null,
        addresses: { "polygon-pos": "0x1" },
        variants: ["branded", "mono"],
      },
    ]);
  });
  test("the SVG is the module's string literal, unescaped, without the package's class", () => {
    const svg = parseSvgModule(readFileSync(join(SVGS, "tokens/branded/BTC.svg.js"), "utf8"));
    expect(svg).toStartWith('<svg xmlns="http://www.w3.org/2000/svg"');
    expect(svg).toEndWith("</svg>");
    expect(svg).toContain('fill="#F7931A"');
    expect(svg).not.toContain("web3icons");
    expect(svg).not.toContain("\\n");
    expect(parseSvgModule("var X = 'not svg'")).toBeNull();
  });
  test("mono marks drawn white become black without fill attributes; other paint is refused", () => {
    const white = '<svg viewBox="0 0 24 24" fill="none"><path fill="#fff" d="M0 0h9v9z"/></svg>';
    expect(blackMono(white)).toBe('<svg viewBox="0 0 24 24"><path d="M0 0h9v9z"/></svg>');
    // a stroked outline keeps no fill; its stroke turns black
    expect(
      blackMono('<svg viewBox="0 0 24 24" fill="none"><path stroke="#fff" d="M1 1h9"/></svg>'),
    ).toBe('<svg viewBox="0 0 24 24"><path fill="none" stroke="#000" d="M1 1h9"/></svg>');
    expect(blackMono(white.replace("#fff", "#F7931A"))).toBeNull();
    expect(blackMono(white.replace("/>", ' opacity=".4"/>'))).toBeNull();
  });
  test("wrapped, bridged and staked forms, testnets and superseded tokens are left out", () => {
    expect(exclusion("token", { name: "Wrapped Bitcoin" })).toContain("wrapped");
    expect(exclusion("token", { name: "Lido Staked SOL" })).toContain("staked");
    expect(exclusion("network", { name: "Goerli Testnet" })).toBe("testnet");
    expect(exclusion("token", { name: "FloorDAO (Old)" })).toBe("superseded token (Old)");
    expect(exclusion("token", { name: "Uniswap" })).toBeNull();
    const btc = { name: "Bitcoin", symbol: "BTC", rank: null };
    const eth = { name: "Ethereum", symbol: "ETH", rank: 2 };
    const tokens = [btc, eth];
    const form = (name: string, symbol: string, rank = 500) =>
      derivativeOf({ name, symbol, rank }, tokens);
    expect(form("renBTC", "RENBTC")).toBe(btc);
    expect(form("Huobi BTC", "HBTC")).toBe(btc);
    expect(form("Origin Ether", "OETH")).toBe(eth);
    expect(form("Swell Ethereum", "SWETH")).toBe(eth);
    // a symbol that only ends like another's is not a form of it
    expect(form("Mbeth Finance", "MBETH")).toBeUndefined();
    expect(form("Beth", "BETH", 1)).toBeUndefined();
  });
  test("the licence guard: MIT is kept, a package under another licence stops the build", () => {
    expect(packageLicence(ROOT, "@web3icons/core")).toBe("MIT");
    expect(packageLicence(ROOT, "@web3icons/common")).toBe("MIT");
    expect(SOURCE_LICENCES.web3icons?.licence).toBe("MIT");
    const dir = tempDir("web3-licence");
    const pkg = join(dir, "node_modules", "x");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "package.json"), '{"license":"CC-BY-NC-4.0"}');
    expect(() => packageLicence(dir, "x")).toThrow("does not allow");
  });
  test("the whole package: the exclusions add up, every kept mark has a black mono mark", () => {
    const { icons, excluded, total } = loaded;
    expect(icons.length).toBeGreaterThan(1500);
    expect(icons.length + Object.values(excluded).reduce((a, b) => a + b, 0)).toBe(total);
    for (const i of icons) {
      if (i.mono) expect(i.mono).not.toMatch(/fill="#fff"|^<svg[^>]* fill="none"/i);
      expect(i.svg).toStartWith("<svg");
    }
    expect(icons.filter((i) => i.mono).length).toBeGreaterThan(1500);
    expect(real("BTC").name).toBe("Bitcoin");
    expect(icons.some((i) => i.name === "Wrapped Bitcoin" || i.symbol === "RENBTC")).toBe(false);
  });
});

describe("web3icons merge", () => {
  const none = { same: {}, namesakes: {} };
  test("a token, its network and its exchange are one project; a reviewed name joins the brand", () => {
    const kucoin = draft("kucoin", { name: "KuCoin" });
    const drafts = [kucoin];
    const icons = loaded.icons.filter((i) => i.name.toLowerCase() === "kucoin");
    expect(icons.map((i) => i.kind).sort()).toEqual(["exchange", "network", "token"]);
    const r = mergeWeb3(drafts, icons, { same: { kucoin: "kucoin" }, namesakes: {} });
    expect(r.merged).toBe(1);
    expect(drafts).toHaveLength(1);
    expect(kucoin.web3?.icons).toHaveLength(3);
    expect(kucoin.aliases).toContain("KCS");
  });
  test("a project without a mono mark joins a reviewed brand but is never a brand of its own", () => {
    const metamask = real("metamask");
    expect(metamask.mono).toBeNull();
    const drafts = [draft("metamask", { name: "MetaMask" })];
    const joined = mergeWeb3(drafts, [metamask], { same: { metamask: "metamask" }, namesakes: {} });
    expect(joined.merged).toBe(1);
    const alone: ReturnType<typeof draft>[] = [];
    const r = mergeWeb3(alone, [metamask], none);
    expect(alone).toHaveLength(0);
    expect(r.noMono).toBe(1);
    expect(r.decisions[0]).toContain("left out: no single-colour (mono) mark");
  });
  test("without a mono mark, a new brand is kept only when its colour mark reads on both surfaces", () => {
    // a mid red reaches 3:1 on white and on #121212; white on navy reads only on dark
    const red =
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none"><path fill="#d0342c" d="M2 2h20v20H2z"/></svg>';
    const coin =
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none"><circle cx="12" cy="12" r="11" fill="#0b1f4d"/><path fill="#fff" d="M9 6h6v12H9z"/></svg>';
    expect(readsOnBothSurfaces(red)).toBe(true);
    expect(readsOnBothSurfaces(coin)).toBe(false);
    const icon = (name: string, svg: string): Web3Icon => ({
      kind: "token",
      id: name,
      file: name.toUpperCase(),
      name,
      rawName: name,
      symbol: name.toUpperCase(),
      rank: 1000,
      svg,
      mono: null,
    });
    const drafts: ReturnType<typeof draft>[] = [];
    const r = mergeWeb3(drafts, [icon("Redcoin", red), icon("Navycoin", coin)], none);
    expect(drafts.map((d) => d.slug)).toEqual(["redcoin"]);
    expect(r.noMono).toBe(1);
  });
  test("an unreviewed name hit is a namesake: its own brand under a suffixed slug", () => {
    // the catalog's kraken is KrakenD; the exchange must not take its slug or its artwork
    const krakend = draft("kraken", { name: "Kraken" });
    const drafts = [krakend];
    const r = mergeWeb3(drafts, [real("kraken")], none);
    expect(krakend.web3).toBeUndefined();
    expect(drafts.map((d) => d.slug)).toEqual(["kraken", "kraken-exchange"]);
    expect(r.decisions[0]).toContain("namesake of kraken");
  });
  test("a new brand never takes a directory company's slug; a taken suffixed slug leaves it out", () => {
    const drafts = [draft("gala-token", { name: "Gala Token Co" })];
    const r = mergeWeb3(drafts, [real("GALA")], none, new Set(["gala"]));
    expect(r.taken).toBe(1);
    const fresh: ReturnType<typeof draft>[] = [];
    mergeWeb3(fresh, [real("GALA")], none, new Set(["gala"]));
    expect(fresh.map((d) => d.slug)).toEqual(["gala-token"]);
  });
  test("symbols become aliases only where no stock ticker or other brand has them", () => {
    const drafts = [draft("link", { name: "Link" })];
    const icons = [real("UNI"), real("LINK"), real("DOGE")];
    const tickers = stockTickers([{ tickers: ["UNI.MC", "FRA:UNI"] }]);
    const r = mergeWeb3(drafts, icons, none, new Set(), tickers);
    const bySlug = new Map(drafts.map((d) => [d.slug, d]));
    expect(bySlug.get("uniswap")?.aliases).not.toContain("UNI");
    expect(bySlug.get("chainlink")?.aliases).not.toContain("LINK");
    expect(bySlug.get("dogecoin")?.aliases).toContain("DOGE");
    expect(r.decisions.join("\n")).toContain(
      "UNI of uniswap: not an alias (a listed company's stock ticker)",
    );
  });
  test("every name hit in the current packages was reviewed", () => {
    const decisions = loadWeb3Decisions(ROOT);
    expect(Object.keys(decisions.same).length).toBeGreaterThan(0);
    for (const slug of Object.values(decisions.same)) expect(typeof slug).toBe("string");
    const report = readFileSync(join(ROOT, "build/catalog-report.txt"), "utf8");
    expect(report).toContain("web3icons network:ethereum+token:ETH -> merged into ethereum");
    expect(report).not.toContain("not reviewed: kept apart by default");
    expect(report).not.toContain("fixture names unknown slug");
  });
});

describe("web3icons in the built catalog", () => {
  const brands = builtCatalog().brands;
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  const entries = brands.flatMap((b) =>
    (b.artwork ?? []).filter((a) => a.source === "web3icons").map((a) => ({ b, a })),
  );
  test("provenance: package, MIT and the exact upstream file, which the package ships", () => {
    expect(entries.length).toBeGreaterThan(1500);
    const files = new Set<string>();
    for (const { a } of entries) {
      expect(a.package).toBe("@web3icons/core");
      expect(a.licence).toBe("MIT");
      const m =
        /^https:\/\/unpkg\.com\/@web3icons\/core@[\d.]+\/dist\/svgs\/((tokens|networks|wallets|exchanges)\/(branded|mono)\/[^/]+\.svg\.js)$/.exec(
          a.url,
        );
      expect(m).not.toBeNull();
      expect(existsSync(join(SVGS, m?.[1] ?? ""))).toBe(true);
      // one project, one brand
      expect(files.has(a.url)).toBe(false);
      files.add(a.url);
    }
    const attribution = readFileSync(join(ROOT, "docs/attribution.md"), "utf8");
    expect(attribution).toContain("## @web3icons/core: the projects' own marks");
    expect(attribution).toMatch(/\| tokens \| \d{4} \|/);
  });
  test("merged brands keep their slug and id; namesakes stay apart", () => {
    expect(bySlug.get("ethereum")?.sources).toContain("web3icons");
    // named with a suffix the catalog brand lacks: Near Protocol is NEAR, not a second brand
    expect(bySlug.get("near")?.sources).toContain("web3icons");
    expect(bySlug.get("near")?.aliases).toContain("Near Protocol");
    expect(bySlug.has("near-protocol")).toBe(false);
    expect(bySlug.get("coinbase")?.id).toBe(
      JSON.parse(readFileSync(join(ROOT, "fixtures/brand-ids.json"), "utf8")).coinbase,
    );
    expect(bySlug.get("kraken")?.sources).not.toContain("web3icons");
    expect(bySlug.get("kraken-exchange")?.artwork?.[0]?.source).toBe("web3icons");
    expect(bySlug.get("gemini-exchange")?.name).toBe("Gemini");
    // a brand only web3icons draws never gets a listed company's stock tickers by name
    const onlyWeb3 = brands.filter((b) => b.sources.length === 1 && b.sources[0] === "web3icons");
    expect(onlyWeb3.length).toBeGreaterThan(0);
    for (const b of onlyWeb3) expect(b.tickers).toBeUndefined();
  });
});
