/**
 * One company, one entry: a name-suggestion-index company named like an icon-set brand joins
 * it only on evidence they are one company (scripts/catalog/same-company.ts, curated
 * fixtures/directory-joins.json). The rules on the real Wikidata/OSM data of the package, the
 * directory step with them, the built catalog, and the routes a user reaches it by.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { compactKey } from "../../../scripts/catalog/keys";
import { buildDirectory, type Candidate, loadCandidates } from "../../../scripts/catalog/nsi";
import { loadRedirects } from "../../../scripts/catalog/redirects";
import {
  type BrandSide,
  type CompanySide,
  type DirectoryJoins,
  decideJoin,
  sameCompany,
  unusedJoins,
} from "../../../scripts/catalog/same-company";
import { loadFixtures } from "../../../scripts/catalog/steps/load";
import type { Brand } from "../../../src/catalog/built-catalog";
import { makeApp, type TestApp } from "../../support/app";
import { brandOf, builtCatalog } from "../../support/catalog";

const ROOT = resolve(import.meta.dir, "../../..");
const candidates = new Map(loadCandidates(ROOT).map((c) => [c.qid, c]));

/** A company of the package by Wikidata id, as the directory step sees it. */
function company(qid: string, domains?: string[]): CompanySide {
  const c = candidates.get(qid);
  if (!c) throw new Error(`no candidate ${qid}`);
  return { ...c, domains: domains ?? c.hosts, areas: c.areas ?? [] };
}

/** An icon-set brand as simple-icons gives it; with `wikidata`, the hosts and kinds of its item. */
function brand(slug: string, name: string, over: Partial<BrandSide> = {}): BrandSide {
  const item = over.wikidata ? candidates.get(over.wikidata) : undefined;
  return {
    slug,
    name,
    domains: [],
    sourceUrl: null,
    guidelinesUrl: null,
    itemHosts: item?.hosts ?? [],
    categories: item?.categories,
    ...over,
  };
}

describe("the rules on real data", () => {
  test("own URL: Google's brand guidelines are on about.google, Google's website (Q95)", () => {
    const google = brand("google", "Google", {
      domains: ["google.com"],
      sourceUrl: "https://partnermarketinghub.withgoogle.com",
      guidelinesUrl: "https://about.google/brand-resource-center/brand-elements/",
    });
    expect(sameCompany(google, company("Q95"))).toStartWith("own URL:");
    // a file on a code forge or a wiki says nothing about whose site it is
    const onGithub = brand("cheerio", "Cheerio", {
      sourceUrl: "https://github.com/cheeriojs/cheerio/blob/x/orange-c.svg",
    });
    expect(sameCompany(onGithub, { ...company("Q5089350"), hosts: ["github.com"] })).toBeNull();
  });

  test("shared website: Renault's renaultgroup.com is a website of Renault (Q6686)", () => {
    const renault = brand("renault", "Renault", { domains: ["renault.com", "renaultgroup.com"] });
    expect(sameCompany(renault, company("Q6686"))).toContain("shared website");
    // o2 (Telefónica Deutschland, Q2401561) and the O2 brand (Q1759255) both give o2online.de
    const o2 = brand("o2", "O2", { domains: ["telefonica.de"], wikidata: "Q2401561" });
    expect(sameCompany(o2, company("Q1759255"))).toContain("Wikidata item Q2401561 gives");
    // O2 UK shares no website with Telefónica Deutschland: curated
    expect(sameCompany(o2, company("Q7072245"))).toBeNull();
  });

  test("national site: HSBC's bank in Taiwan, Telenor's in Sweden; not a bookmaker on nike.sk", () => {
    const hsbc = brand("hsbc", "HSBC", {
      wikidata: "Q190464",
      domains: ["hsbc.com", "hsbc.co.uk", "hsbc.com.mx", "hsbc.com.hk"],
    });
    expect(sameCompany(hsbc, company("Q5635861"))).toStartWith("national site: hsbc.com.tw");
    const telenor = brand("telenor", "Telenor", {
      wikidata: "Q845632",
      domains: ["telenor.no", "telenor.com", "telenor.hu"],
    });
    expect(sameCompany(telenor, company("Q10692298"))).toStartWith("national site: telenor.se");
    // Telenor's former Bulgarian company is Yettel now: not every site is Telenor's
    expect(sameCompany(telenor, company("Q14915070"))).toBeNull();
    // Niké, the Slovak bookmaker, is mapped as a bookmaker, Nike as a clothes shop
    const nike = brand("nike", "Nike", {
      wikidata: "Q483915",
      domains: ["nike.com", "nike.com.cn", "nike.co.kr"],
    });
    expect(company("Q12772537").categories).not.toContain("shop/clothes");
    expect(sameCompany(nike, company("Q12772537"))).toBeNull();
    // one national site is not a multinational's: vivo the phone maker and Vivo in Brazil
    const vivo = brand("vivo", "vivo", {
      wikidata: "Q18301787",
      domains: ["vivo.com", "vivo.co.in"],
    });
    expect(sameCompany(vivo, company("Q1428656"))).toBeNull();
    // a brand Wikidata does not know, or a country the company is not mapped in: no
    expect(sameCompany({ ...hsbc, wikidata: undefined }, company("Q5635861"))).toBeNull();
    expect(sameCompany(hsbc, { ...company("Q5635861"), areas: ["jp"] })).toBeNull();
  });

  test("namesakes stay apart: the same name and even the same label is no evidence", () => {
    for (const [b, qid] of [
      [brand("argos", "Argos", { domains: ["argos.co.uk"], wikidata: "Q4789707" }), "Q4750477"],
      [brand("bugatti", "Bugatti", { domains: ["bugatti.com"], wikidata: "Q2308012" }), "Q1002252"],
      [
        brand("kik", "Kik", { domains: ["kik.com"], sourceUrl: "https://www.kik.com/news/" }),
        "Q883965",
      ],
      [brand("otto", "Otto", { domains: ["ottogroup.com"] }), "Q7109498"],
      [brand("burton", "Burton", { domains: ["burton.com"] }), "Q5000795"],
      [brand("target", "Target", { domains: ["target.com"], wikidata: "Q1046951" }), "Q7685854"],
      [brand("hermes", "Hermes", { domains: ["myhermes.de"], wikidata: "Q1613532" }), "Q843887"],
      [brand("pandora", "Pandora", { domains: ["pandoraforbrands.com"] }), "Q2241604"],
      [
        brand("smart", "smart", {
          domains: ["global.smart.com", "smart.com", "smart.mercedes-benz.com"],
          wikidata: "Q156490",
        }),
        "Q7543955",
      ],
      [
        brand("vodafone", "Vodafone", {
          domains: ["vodafone.com.eg", "vodafone.com"],
          wikidata: "Q122141",
        }),
        "Q846031",
      ],
    ] as const)
      expect([b.slug, qid, sameCompany(b, company(qid))]).toEqual([b.slug, qid, null]);
  });

  test("decideJoin: curated decisions first, one brand of evidence, or none", () => {
    const joins: DirectoryJoins = {
      join: { Q487494: { brand: "tesco", why: "Tesco plc" } },
      apart: { Q95: { brand: "google", why: "a test" } },
    };
    const used = new Set<string>();
    const tesco = brand("tesco", "Tesco", { domains: ["tesco.com"] });
    expect(decideJoin("Q487494", [tesco], company("Q487494"), joins, used)).toEqual({
      into: "tesco",
      why: "curated: Tesco plc",
    });
    // with no curated decision, no rule joins Tesco plc (tesco.ie, tesco.pl ...) to tesco.com
    expect(
      decideJoin("Q487494", [tesco], company("Q487494"), { join: {}, apart: {} }, used),
    ).toEqual({});
    const google = brand("google", "Google", { guidelinesUrl: "https://about.google/brand/" });
    expect(decideJoin("Q95", [google], company("Q95"), joins, used).into).toBeUndefined();
    // a curated brand that is not of the company's name joins nothing
    expect(decideJoin("Q487494", [google], company("Q487494"), joins, used).note).toContain(
      "not a brand of its name",
    );
    // evidence for two brands of the name: neither
    const twice = decideJoin(
      "Q95",
      [google, { ...google, slug: "google-2" }],
      company("Q95"),
      { join: {}, apart: {} },
      used,
    );
    expect(twice).toEqual({ note: "evidence for google and google-2; not joined" });
    expect(unusedJoins(joins, used)).toEqual([]);
    expect(unusedJoins(joins, new Set(["join Q487494"]))).toEqual(["apart Q95"]);
  });
});

describe("the directory step joins an entry into the brand", () => {
  const tescoPlc = candidates.get("Q487494") as Candidate;
  const argosNl = candidates.get("Q4750477") as Candidate;
  const joins: DirectoryJoins = {
    join: { Q487494: { brand: "tesco", why: "Tesco plc" } },
    apart: {},
  };
  const run = () => {
    const tesco = brandOf("tesco", { name: "Tesco", domains: ["tesco.com"] });
    const argos = brandOf("argos", { name: "Argos", domains: ["argos.co.uk"] });
    const r = buildDirectory(
      ROOT,
      [tesco, argos],
      {},
      new Set(),
      [tescoPlc, argosNl],
      new Set(),
      joins,
    );
    return { r, tesco };
  };

  test("Tesco gains Tesco plc's id, sites, links, where and as what OSM maps it, its other names", () => {
    const { r, tesco } = run();
    expect(r.joined.map((j) => [j.slug, j.into])).toEqual([["tesco-q487494", "tesco"]]);
    expect(r.entries.map((e) => e.slug)).toEqual(["argos-q4750477"]);
    expect(tesco.wikidata).toBe("Q487494");
    expect(tesco.domains).toEqual(["tesco.com", ...tescoPlc.hosts]);
    expect(tesco.sources).toContain("name-suggestion-index");
    expect(tesco.links?.website).toBe("https://www.tescoplc.com/");
    expect(tesco.description).toBe(tescoPlc.description as string);
    expect(tesco.categories).toEqual(tescoPlc.categories as string[]);
    // mapped in Europe and the world: international, no countries
    expect(tesco.countries).toBeUndefined();
    expect(tesco.aliases).toContain("Tesco Bank");
    expect(r.report.join("\n")).toContain(
      "Tesco (Q487494) joined into tesco (instead of an entry tesco-q487494), +tescoplc.com",
    );
  });

  test("a brand OSM maps nowhere else takes the company's countries (Boots: gb, ie, no, th)", () => {
    const boots = brandOf("boots", { name: "Boots", domains: ["boots-uk.com"] });
    const r = buildDirectory(
      ROOT,
      [boots],
      {},
      new Set(),
      [candidates.get("Q6123139") as Candidate],
      new Set(),
      { join: { Q6123139: { brand: "boots", why: "Boots" } }, apart: {} },
    );
    expect(r.entries).toEqual([]);
    expect(boots.countries).toEqual(["gb", "ie", "no", "th"]);
    expect(boots.domains).toContain("boots.com");
  });

  test("without the curated decision Tesco plc stays an entry; a stale decision is reported", () => {
    const tesco = brandOf("tesco", { name: "Tesco", domains: ["tesco.com"] });
    const r = buildDirectory(ROOT, [tesco], {}, new Set(), [tescoPlc], new Set(), {
      join: { Q1: { brand: "tesco", why: "stale" } },
      apart: {},
    });
    expect(r.entries.map((e) => e.slug)).toEqual(["tesco-q487494"]);
    expect(r.report).toContain("directory-joins.json: join Q1 decided nothing");
  });
});

describe("the built catalog", () => {
  const { brands } = builtCatalog();
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  const report = readFileSync(join(ROOT, "build/catalog-report.txt"), "utf8");

  test("every join of this build, with its evidence", () => {
    const joined = [
      ...report.matchAll(
        /\((Q\d+)\) joined into (\S+) \(instead of an entry (\S+)\)[^:]*: (own URL|shared website|national site|curated)/g,
      ),
    ]
      .map((m) => `${m[1]} ${m[3]} -> ${m[2]}: ${m[4]}`)
      .sort((a, b) => (a < b ? -1 : 1));
    expect(joined).toEqual([
      "Q10692298 telenor-q10692298 -> telenor: national site",
      "Q111972226 taco-bell-q111972226 -> tacobell: own URL",
      "Q1759255 o2-q1759255 -> o2: shared website",
      "Q1796954 telenor-q1796954 -> telenor: national site",
      "Q2382166 ziggo-q2382166 -> ziggo: curated",
      "Q3445676 telenor-q3445676 -> telenor: national site",
      "Q467752 verizon-q467752 -> verizon: curated",
      "Q4854116 santander-q4854116 -> banco-santander: national site",
      "Q487494 tesco-q487494 -> tesco: curated",
      "Q5635861 hsbc-q5635861 -> hsbc: national site",
      "Q58218442 dm-q58218442 -> dm: curated",
      "Q6123139 boots-q6123139 -> boots: curated",
      "Q629269 macys-q629269 -> macys: curated",
      "Q6686 renault-q6686 -> renault: own URL",
      "Q685967 kaufland-q685967 -> kaufland: curated",
      "Q7072245 o2-q7072245 -> o2: curated",
      "Q708667 man-q708667 -> man: curated",
      "Q758603 auchan-q758603 -> auchan: curated",
      "Q8352675 cupra-q8352675 -> cupra: curated",
      "Q875292 santander-q875292 -> banco-santander: curated",
      "Q919641 verizon-q919641 -> verizon: curated",
      "Q95 google-q95 -> google: own URL",
    ]);
    expect(report).not.toContain("directory-joins.json:");
    expect(report).not.toMatch(/evidence for \S+ and \S+; not joined/);
  });

  test("google-q95 and tesco-q487494 are gone and answer as Google and Tesco", () => {
    const redirects = loadRedirects(ROOT);
    for (const [from, to] of [
      ["google-q95", "google"],
      ["tesco-q487494", "tesco"],
      ["boots-q6123139", "boots"],
    ]) {
      expect([from, bySlug.has(from as string)]).toEqual([from, false]);
      expect(redirects[from as string]).toBe(to as string);
      expect(bySlug.get(to as string)?.formerSlugs).toContain(from as string);
    }
    const tesco = bySlug.get("tesco") as Brand;
    expect(tesco.domains).toEqual(
      expect.arrayContaining(["tesco.com", "tescoplc.com", "tesco.ie"]),
    );
    expect(tesco.wikidata).toBe("Q487494");
    expect(tesco.categories).toContain("shop/supermarket");
    expect(Object.keys(tesco.variants).length).toBeGreaterThan(0);
  });

  test("namesakes are still apart: Argos the fuel company, Bugatti the fashion house, KiK", () => {
    expect(bySlug.get("argos-q4750477")?.domains).toContain("argos.nl");
    expect(bySlug.get("argos")?.domains).toContain("argos.co.uk");
    expect(bySlug.get("bugatti-q1002252")?.domains).toContain("bugatti-fashion.com");
    expect(bySlug.get("kik-q883965")?.domains).toContain("kik.de");
    expect(bySlug.get("n-i-k-e")?.domains).toEqual(["nike.sk"]);
  });

  test("a second pass over the built catalog joins nothing more", () => {
    const fixtures = loadFixtures(ROOT);
    const iconBrands = new Map<string, Brand[]>();
    for (const b of brands)
      if (!(b.sources.length === 1 && b.sources[0] === "name-suggestion-index"))
        for (const k of new Set([compactKey(b.name), compactKey(b.slug)]))
          iconBrands.set(k, [...(iconBrands.get(k) ?? []), b]);
    const more: string[] = [];
    let pairs = 0;
    for (const e of brands) {
      if (e.sources.length !== 1 || e.sources[0] !== "name-suggestion-index" || !e.wikidata)
        continue;
      const same = iconBrands.get(compactKey(e.name)) ?? [];
      const c = candidates.get(e.wikidata);
      if (!same.length || !c) continue;
      pairs++;
      const d = decideJoin(
        e.wikidata,
        same.map((b) => ({ ...b, itemHosts: candidates.get(b.wikidata ?? "")?.hosts ?? [] })),
        { ...c, domains: e.domains, areas: c.areas ?? [] },
        fixtures.directoryJoins,
        new Set(),
      );
      if (d.into) more.push(`${e.slug} -> ${d.into} (${d.why})`);
    }
    expect(pairs).toBeGreaterThan(100);
    expect(more).toEqual([]);
  });
});

describe("through the API", () => {
  let t: TestApp;
  let pro: string;
  beforeAll(async () => {
    t = await makeApp();
    pro = await t.key("pro");
  });
  afterAll(async () => {
    await t.deps.enrichment.idle();
    await t.close();
  });

  test("TESCO STORES 3142 LONDON GB answers tesco, the brand with the mark", async () => {
    const r = await t.get(
      `/v1/brand?transaction=${encodeURIComponent("TESCO STORES 3142 LONDON GB")}`,
      pro,
    );
    expect(r.status).toBe(200);
    const body = (await r.json()) as { slug: string; variants: string[] };
    expect(body.slug).toBe("tesco");
    expect(body.variants).toContain("color");
  });

  test("Tesco plc's sites and the retired slug land on tesco; search finds one Google", async () => {
    const byDomain = await t.get("/v1/brand?domain=tescoplc.com", pro);
    expect(((await byDomain.json()) as { slug: string }).slug).toBe("tesco");
    const bySlug = await t.get("/v1/catalog/google-q95", pro);
    expect(bySlug.status).toBe(200);
    expect(((await bySlug.json()) as { slug: string }).slug).toBe("google");
    const search = await t.get("/v1/search?q=google&limit=20", pro);
    const matches = ((await search.json()) as { matches: { slug: string; name: string }[] })
      .matches;
    expect(matches[0]?.slug).toBe("google");
    expect(matches.filter((m) => m.name === "Google").map((m) => m.slug)).toEqual(["google"]);
  });
});
