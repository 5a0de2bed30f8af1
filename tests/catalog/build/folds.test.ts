/**
 * One brand, one entry: icon names that draw another brand's mark (card badges, monograms,
 * style variants: scripts/catalog/folds.ts), thesvg copies of lobehub marks and curated domains
 * (thesvg-merge.ts) fold into the brand they draw; the retired slugs stay reserved and answer
 * as that brand. Rules on names and real package data; the built catalog and the HTTP routes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { foldIconName } from "../../../scripts/catalog/folds";
import { iconToSvg } from "../../../scripts/catalog/iconify";
import { compactKey } from "../../../scripts/catalog/keys";
import { buildDirectory, type Candidate } from "../../../scripts/catalog/nsi";
import { loadRedirects } from "../../../scripts/catalog/redirects";
import { loadSet, parseIconName, type SetId } from "../../../scripts/catalog/sources";
import { attachTickers } from "../../../scripts/catalog/tickers";
import { chooseVariants } from "../../../scripts/catalog/variant-choice";
import { makeApp, type TestApp } from "../../support/app";
import { builtCatalog } from "../../support/catalog";
import { brandOf, draft, iconCandidate } from "./steps/draft";

const ROOT = resolve(import.meta.dir, "../../..");

/** The fold of a real icon name of a set, against the set's own base names. */
function foldOf(set: SetId, name: string) {
  const { set: icons } = loadSet(ROOT, set);
  const bases = new Set(Object.keys(icons.icons).map((n) => parseIconName(set, n).base));
  return foldIconName(set, parseIconName(set, name).base, bases);
}

describe("fold rules on icon names", () => {
  test("a card badge cc-<brand> is the brand's mark on a card: cib and fa6-brands", () => {
    expect(foldOf("cib", "cc-stripe")).toEqual({
      base: "stripe",
      mod: "cc",
      kind: "card badge",
    });
    expect(foldOf("fa6-brands", "cc-amex")?.base).toBe("amex");
    expect(foldOf("fa6-brands", "cc-diners-club")?.base).toBe("diners-club");
    // another set's "cc-" is a name of its own
    expect(foldIconName("logos", "cc-visa", new Set(["visa"]))).toBeNull();
  });

  test("a monogram <brand>-<letters>: letters of the name in order, the set draws the brand", () => {
    for (const [set, name, base] of [
      ["cib", "stripe-s", "stripe"],
      ["fa6-brands", "facebook-f", "facebook"],
      ["cib", "linkedin-in", "linkedin"],
      ["fa6-brands", "pied-piper-pp", "pied-piper"],
      ["fa6-brands", "google-plus-g", "google-plus"],
    ] as const) {
      expect([name, foldOf(set, name)]).toEqual([
        name,
        { base, mod: "monogram", kind: "monogram" },
      ]);
    }
    const bases = new Set(["stripe", "cirrus"]);
    // letters not in the name, or a set that names products this way, are brands of their own
    expect(foldIconName("cib", "stripe-x", bases)).toBeNull();
    expect(foldIconName("logos", "cirrus-ci", bases)).toBeNull();
    // the set does not draw the brand itself: no fold (bxl's "bolt-b" is not known to be Bolt)
    expect(foldIconName("bxl", "bolt-b", new Set(["paddle"]))).toBeNull();
  });

  test("a style variant <brand>-<style or number>, where the set draws <brand>", () => {
    expect(foldOf("fa6-brands", "gg-circle")).toEqual({
      base: "gg",
      mod: "circle",
      kind: "style variant",
    });
    expect(foldOf("fa6-brands", "steam-symbol")?.base).toBe("steam");
    expect(foldOf("fa6-brands", "edge-legacy")).toEqual({
      base: "edge",
      mod: "legacy",
      kind: "style variant",
    });
    expect(foldOf("bxl", "slack-old")?.mod).toBe("old");
    expect(foldOf("cib", "500px-5")?.base).toBe("500px");
    // a product named like a style of a brand the set does not draw stays: "Accessible Icon"
    expect(foldOf("fa6-brands", "accessible-icon")).toBeNull();
    // words that name products are not styles: Sublime Text, Google Plus, Cirrus CI
    expect(foldIconName("cib", "sublime-text", new Set(["sublime"]))).toBeNull();
    expect(foldOf("fa6-brands", "google-plus")).toBeNull();
  });
});

describe("variants of a folded brand", () => {
  test("a card badge is never a variant, not even the last choice of mono mark", () => {
    const amazonPay = draft("amazonpay", {
      siSvg: null,
      sources: new Set(["iconify:cib"]),
      candidates: [iconCandidate("cib", "cc-amazon-pay", ["cc"])],
    });
    expect(chooseVariants(amazonPay).mono).toBeUndefined();
    amazonPay.candidates.push(iconCandidate("cib", "amazon-pay"));
    const mono = chooseVariants(amazonPay).mono?.svg;
    const plain = iconToSvg(iconCandidate("cib", "amazon-pay").icon, amazonPay.name);
    expect(mono).toBe(plain);
  });

  test("a monogram or style variant serves only where the set has no plain mark", () => {
    const glide = draft("glide", {
      siSvg: null,
      sources: new Set(["iconify:fa6-brands"]),
      candidates: [iconCandidate("fa6-brands", "glide-g", ["monogram"])],
    });
    const monogram = iconToSvg(iconCandidate("fa6-brands", "glide-g").icon, glide.name);
    expect(chooseVariants(glide).mono?.svg).toBe(monogram);
    glide.candidates.unshift(iconCandidate("fa6-brands", "glide"));
    expect(chooseVariants(glide).mono?.svg).not.toBe(monogram);
    // former artwork never serves
    const slack = draft("slack", {
      siSvg: null,
      candidates: [iconCandidate("bxl", "slack-old", ["old"])],
    });
    expect(chooseVariants(slack).mono).toBeUndefined();
  });
});

describe("retired slugs stay reserved", () => {
  const company = (name: string, qid: string, host: string): Candidate => ({
    qid,
    name,
    label: name,
    otherNames: [],
    nativeNames: [],
    weight: 10,
    hosts: [host],
    links: {},
  });

  test("a directory company never takes a retired slug: Stripes the store is stripes-q7624135", () => {
    const stripe = brandOf("stripe", { name: "Stripe", domains: ["stripe.com"] });
    const r = buildDirectory(
      ROOT,
      [stripe],
      {},
      new Set(),
      [company("Stripes", "Q7624135", "stripesstores.com")],
      new Set(["stripes"]),
    );
    expect(r.entries.map((e) => e.slug)).toEqual(["stripes-q7624135"]);
    expect(r.report.join("\n")).toContain("namesake of the retired slug stripes");
  });

  test("nor does a listed company", () => {
    const r = attachTickers(
      [],
      [
        {
          name: "Stripes Inc.",
          website: "stripes.example",
          country: null,
          symbol: "STRP",
          tickers: ["STRP"],
        },
      ],
      new Set(["stripes"]),
    );
    expect(r.entries.map((e) => e.slug)).toEqual(["stripes-strp"]);
  });
});

describe("the built catalog: one brand, one entry", () => {
  const { brands } = builtCatalog();
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  const redirects = loadRedirects(ROOT);

  test("no card badge, monogram or style variant of a brand is a brand of its own", () => {
    for (const slug of ["ccstripe", "ccvisa", "ccamex", "stripes", "facebookf", "linkedinin"])
      expect([slug, bySlug.has(slug)]).toEqual([slug, false]);
    const names = new Set(brands.filter((b) => b.artwork).map((b) => compactKey(b.name)));
    const style =
      /^(.+?) (alt|alternate|circle|square|stroke|symbol|simple|reverse|old|legacy|\d+)$/i;
    const letters = /^(.+?) ([a-z]{1,2})$/i;
    /** the letters appear in the name in order ("in" in "linkedin") */
    const inOrder = (short: string, long: string) => {
      let i = 0;
      for (const ch of long) if (ch === short[i]) i++;
      return i === short.length;
    };
    const duplicates = brands
      .filter((b) => b.artwork && b.sources.every((s) => /^iconify:(cib|fa6-brands|bxl)$/.test(s)))
      .filter((b) => {
        if (/^Cc /.test(b.name)) return true;
        const variant = style.exec(b.name);
        if (variant && names.has(compactKey(variant[1] as string))) return true;
        const mark = letters.exec(b.name);
        const base = compactKey(mark?.[1] ?? "");
        return mark !== null && names.has(base) && inOrder((mark[2] as string).toLowerCase(), base);
      })
      .map((b) => `${b.slug} (${b.name})`);
    // bxl's "Bolt B" and "Paddle P" are not known to be those companies' marks: left as they are
    expect(duplicates.sort()).toEqual(["boltb (Bolt B)", "paddlep (Paddle P)"]);
  });

  test("the badges and letter marks are the brand's: its sources name the sets that drew them", () => {
    expect(bySlug.get("visa")?.sources).toContain("iconify:fa6-brands");
    expect(bySlug.get("stripe")?.formerSlugs).toEqual(
      expect.arrayContaining(["ccstripe", "stripes"]),
    );
    expect(bySlug.get("americanexpress")?.formerSlugs).toContain("ccamex");
    expect(bySlug.get("microsoftedge")?.formerSlugs).toEqual(
      expect.arrayContaining(["edge", "edgelegacy"]),
    );
  });

  test("namesakes stay apart: the Stripes stores, the Edge token, Dolphin and FLUX", () => {
    expect(bySlug.get("stripes-q7624135")?.name).toBe("Stripes");
    expect(bySlug.get("edge-token")?.name).toBe("Edge");
    expect(bySlug.get("dolphin-dphnai")?.name).toBe("Dolphin (dphnAI)");
    expect(bySlug.get("flux-black-forest-labs")).toBeDefined();
    expect(bySlug.get("flux")?.domains).toContain("fluxcd.io");
  });

  test("every retired slug of the fixture answers as a brand and is no brand's own", () => {
    expect(Object.keys(redirects).length).toBeGreaterThan(150);
    for (const [from, to] of Object.entries(redirects)) {
      expect([from, bySlug.has(from)]).toEqual([from, false]);
      expect([from, bySlug.get(to)?.formerSlugs?.includes(from)]).toEqual([from, true]);
    }
  });
});

describe("retired slugs through the API", () => {
  let t: TestApp;
  let free: string;
  let pro: string;
  beforeAll(async () => {
    t = await makeApp();
    free = await t.key("free");
    pro = await t.key("pro");
  });
  afterAll(() => t.close());

  test("a folded slug answers as the brand it depicts: by slug, as SVG and in a batch", async () => {
    for (const [from, to] of [
      ["ccstripe", "stripe"],
      ["stripes", "stripe"],
      ["ccvisa", "visa"],
      ["edge", "microsoftedge"],
    ]) {
      const res = await t.get(`/v1/catalog/${from}`, free);
      expect([from, res.status]).toEqual([from, 200]);
      expect(((await res.json()) as { slug: string }).slug).toBe(to as string);
      const svg = await t.get(`/v1/svg/${from}`, free);
      expect([from, svg.status]).toEqual([from, 200]);
      expect(svg.headers.get("content-type")).toContain("image/svg+xml");
    }
    const batch = await t.post("/v1/catalog/batch", pro, {
      slugs: ["ccstripe", "stripes", "stripe"],
    });
    const body = (await batch.json()) as { results: Record<string, { slug: string } | null> };
    expect(Object.values(body.results).map((r) => r?.slug)).toEqual(["stripe", "stripe", "stripe"]);
  });

  test("search lands on one Stripe: no Stripe S or Cc Stripe", async () => {
    const res = await t.get("/v1/search?q=stripe&limit=10", pro);
    const body = (await res.json()) as { matches: { slug: string; name: string }[] };
    expect(body.matches[0]?.slug).toBe("stripe");
    const stripeMarks = body.matches.filter((m) => /^(cc ?)?stripe( s)?$/i.test(m.name));
    expect(stripeMarks.map((m) => m.slug)).toEqual(["stripe"]);
  });
});
