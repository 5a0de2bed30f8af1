/**
 * Ranking on the real built catalog (the database beside CATALOG_FILE, default
 * build/catalog.sqlite), with whole-catalog reloads: test:fast leaves this out.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Brand, BuiltCatalog } from "../../../src/catalog/built-catalog";
import { popularityOf, SearchIndex } from "../../../src/catalog/search/service";
import { compact } from "../../../src/catalog/search/text";
import { CatalogService } from "../../../src/catalog/service";
import { FileCatalogSource } from "../../../src/catalog/store/embedded";
import { CATALOG_FILE } from "../../support/app";
import { sharedCatalogSource } from "../../support/catalog";

let catalog: CatalogService;
let index: SearchIndex;
let built: BuiltCatalog;

const names = (q: string, limit = 20) => index.search(q, limit).map((b) => b.name);
const slugs = (q: string, limit = 20) => index.search(q, limit).map((b) => b.slug);
const bySlug = (slug: string) => catalog.brand(slug) as Brand;

beforeAll(async () => {
  // the catalog database the build wrote, shared by every test file (read-only)
  const source = sharedCatalogSource();
  built = await source.load();
  catalog = new CatalogService(source);
  await catalog.load();
  index = new SearchIndex(catalog);
});

describe("tier 0: exact matches first", () => {
  test("exact name, any case, beats longer names that start with it", () => {
    expect(slugs("github")[0]).toBe("github");
    expect(slugs("GitHub")[0]).toBe("github");
    expect(slugs("git")[0]).toBe("git");
    expect(names("git")).toContain("GitHub"); // prefix matches follow
  });
  test("exact slug", () => {
    const b = bySlug("dotnet");
    expect(b.name).toBe(".NET");
    expect(slugs("dotnet")[0]).toBe("dotnet");
  });
  test("exact alias", () => {
    expect(bySlug("bluesky").aliases).toContain("bsky");
    expect(slugs("bsky")[0]).toBe("bluesky");
    expect(slugs("chromecast")[0]).toBe("googlecast");
    expect(slugs("draw.io")[0]).toBe("diagramsdotnet");
  });
  test("exact domain", () => {
    expect(bySlug("stripe").domains).toContain("stripe.com");
    expect(slugs("stripe.com")[0]).toBe("stripe");
    expect(slugs("www.github.com")[0]).toBe("github");
  });
  test("ignoring spaces, dots and dashes, and short forms of multi-word names", () => {
    expect(slugs("vs code")[0]).toBe("visualstudiocode");
    expect(slugs("vscode")[0]).toBe("visualstudiocode");
    expect(slugs("nextjs")[0]).toBe("nextdotjs");
    expect(slugs("amazon web services")[0]).toBe("amazonwebservices");
  });
  test("symbols that carry meaning are kept: C++ is not C", () => {
    expect(slugs("c++")[0]).toBe("cplusplus");
    expect(slugs("c")[0]).not.toBe("cplusplus");
  });
});

describe("tier 1 and 2: prefixes, then later words", () => {
  test("a prefix of the name", () => {
    const r = names("strip");
    expect(r[0]).toBe("Stripe");
  });
  test("'drive' finds Google Drive after the names that start with 'drive'", () => {
    const r = index.search("drive", 50);
    const i = r.findIndex((b) => b.slug === "googledrive");
    expect(i).toBeGreaterThan(-1);
    for (const b of r.slice(0, i)) {
      const starts =
        [b.name, ...b.aliases].some((n) => n.toLowerCase().startsWith("drive")) ||
        b.slug.startsWith("drive") ||
        b.domains.some((d) => d.startsWith("drive"));
      expect(starts || b.name.toLowerCase() === "drive").toBe(true);
    }
  });
  test("a later word in a multi-word name comes before typo matches", () => {
    // "teams": TeamSpeak (prefix) first, Microsoft Teams (word) next, typos after
    const r = slugs("teams");
    expect(r.indexOf("microsoftteams")).toBeGreaterThan(-1);
    // (a directory entry whose name starts with "teams" is a prefix match)
    expect(r.indexOf("microsoftteams")).toBeLessThan(4);
  });
  test("words in any order", () => {
    expect(slugs("drive google")[0]).toBe("googledrive");
    expect(slugs("google dr")[0]).toBe("googledrive");
  });
});

describe("tier 3: typos", () => {
  test("a swap counts as one edit: 'gihtub' finds GitHub first", () => {
    expect(slugs("gihtub")[0]).toBe("github");
  });
  test("one edit from 4 characters", () => {
    expect(slugs("slak")).toContain("slack");
    expect(slugs("figmq")[0]).toBe("figma");
  });
  test("two edits from 8 characters", () => {
    expect(slugs("kubernetse")[0]).toBe("kubernetes");
    expect(slugs("kubernxtxs")[0]).toBe("kubernetes");
    expect(slugs("postgress")[0]).toBe("postgresql");
    // a swap counts as one edit here too: swap + deletion, two swaps
    expect(slugs("kubrentes")[0]).toBe("kubernetes");
    expect(slugs("kbuernetse")[0]).toBe("kubernetes");
  });
  test("no typos below 4 characters, no second edit below 8", () => {
    expect(slugs("gti")).not.toContain("git");
    expect(slugs("sxak")).not.toContain("slack");
    expect(slugs("gitxhxb")).not.toContain("github");
    expect(slugs("gihtbu")).not.toContain("github"); // two swaps in 6 characters
  });
  test("exact and prefix matches outrank typo matches", () => {
    // "slack" is one edit from "stack", "black", ...: Slack and names starting with it first
    const r = names("slack");
    expect(r[0]).toBe("Slack");
    const firstTypo = r.findIndex((n) => !n.toLowerCase().startsWith("slack"));
    expect(r.slice(firstTypo).every((n) => !n.toLowerCase().startsWith("slack"))).toBe(true);
  });
  test("diacritics are folded", () => {
    expect(slugs("citroen")[0]).toBe("citroen");
    expect(bySlug("citroen").name).toBe("Citroën");
  });
});

describe("limits and determinism", () => {
  test("limit caps the result", () => {
    expect(index.search("go", 5)).toHaveLength(5);
    expect(index.search("go", 50).length).toBeLessThanOrEqual(50);
  });
  test("nothing for gibberish", () => {
    expect(index.search("qxzjvkw", 20)).toEqual([]);
  });
  test("same query, same order, also after a reload and on another instance", async () => {
    const before = slugs("go", 50);
    await catalog.load();
    expect(slugs("go", 50)).toEqual(before);
    expect(slugs("  GO  ", 50)).toEqual(before);
    const copy = new CatalogService(sharedCatalogSource());
    await copy.load();
    expect(new SearchIndex(copy).search("go", 50).map((b) => b.slug)).toEqual(before);
    copy.close();
  });
  test("within the prefix tier of own names, popularity weighs against what is left over", () => {
    const r = index.search("google", 50).slice(1);
    expect(r.length).toBeGreaterThan(10);
    // leftover: characters after "google" in the brand's own name; standing: popularity
    // (sources + 1 with a domain) less half the leftover, never increasing down the list
    // brands with artwork (directory entries are measured in the query list)
    const own = r.filter(
      (b) => compact(b.name).startsWith("google") && Object.keys(b.variants).length > 0,
    );
    expect(own.length).toBeGreaterThan(10);
    const standing = own.map(
      (b) => popularityOf(b) - (compact(b.name).length - "google".length) / 2,
    );
    expect(standing).toEqual([...standing].sort((a, b) => b - a));
  });

  test("a prefix finds the famous brand first", () => {
    for (const [q, slug] of [
      ["micr", "microsoft"],
      ["insta", "instagram"],
      ["kube", "kubernetes"],
      ["face", "facebook"],
      ["linke", "linkedin"],
      ["amaz", "amazon"],
    ]) {
      expect([q, slugs(q as string)[0]]).toEqual([q, slug]);
    }
    // the niche brands the prefix also starts are still there, below
    expect(slugs("kube")).toContain("kubeflow");
  });

  test("abbreviations, tickers and names in other scripts find their brand", () => {
    for (const [q, slug] of [
      ["msft", "microsoft"],
      ["amex", "americanexpress"],
      ["gcp", "googlecloud"],
      ["ms teams", "microsoftteams"],
      ["Яндекс", "yandex"],
      ["腾讯", "tencent"],
    ]) {
      expect([q, slugs(q as string)[0]]).toEqual([q, slug]);
    }
  });

  test("a Cyrillic name without a curated alias is found through its transliteration", () => {
    // "Телеграмм" (double m) is not an alias: transliterated "telegramm", spelled with one m,
    // is Telegram's name (a transliteration matches whole names only: tests in transliteration.test.ts)
    expect(slugs("Телеграмм")[0]).toBe("telegram");
  });
  test("full ties go to the lower id", () => {
    const base = bySlug("github");
    const twin = (id: number, slug: string, name: string): Brand => ({
      ...base,
      id,
      slug,
      name,
      aliases: [],
      domains: [],
    });
    const small = new CatalogService(new FileCatalogSource(CATALOG_FILE));
    small.install({
      ...built,
      brands: [twin(7, "zeta-one", "Zeta One"), twin(3, "zeta-two", "Zeta Two")],
    });
    const r = new SearchIndex(small).search("zeta", 10).map((b) => b.slug);
    expect(r).toEqual(["zeta-two", "zeta-one"]);
  });
});

describe("index follows the catalog", () => {
  test("a reload re-indexes, an update re-indexes the changed brand", async () => {
    const github = bySlug("github");
    catalog.update({ ...github, aliases: [...github.aliases, "Octo Hub Zeta"] });
    expect(slugs("octo hub zeta")[0]).toBe("github");
    // a reload to GitHub, Stripe (renamed) and a few hundred others: installing the whole
    // catalog again would only cost time
    const kept = built.brands.filter(
      (b, i) => i < 500 || b.slug === "github" || b.slug === "stripe",
    );
    catalog.install({
      ...built,
      version: `${built.version}-renamed`,
      brands: kept.map((b) => (b.slug === "stripe" ? { ...b, name: "Stryqe Payments" } : b)),
    });
    expect(catalog.brand("github")).toBeDefined();
    expect(slugs("stryqe")[0]).toBe("stripe");
    expect(slugs("octo hub zeta")).not.toContain("github");
    await catalog.load();
    expect(slugs("stryqe")).toEqual([]);
  });
});

describe("a one-letter word beside longer ones (autocomplete sends 'google d')", () => {
  test("matches like a prefix: every result has a name word or domain starting with it", () => {
    const found = index.search("google d", 20);
    expect(found.slice(0, 2).map((b) => b.slug)).toEqual(["googledrive", "googledocs"]);
    for (const b of found) {
      const words = [b.name, ...b.aliases, ...b.domains].flatMap((s) =>
        s.toLowerCase().split(/[\s.]+/),
      );
      expect(words.some((w) => w.startsWith("d"))).toBe(true);
    }
    expect(slugs("s stripe")[0]).toBe("stripe");
    expect(slugs("microsoft t")[0]).toBe("microsoftteams");
    // a letter no matching brand has a word for: nothing
    expect(slugs("stripe q")).toEqual([]);
  });
});
