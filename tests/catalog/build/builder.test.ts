import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyAliasOverrides } from "../../../scripts/catalog/aliases";
import { assignDomains, claimsFromUrl, type DomainBrand } from "../../../scripts/catalog/domains";
import { type DraftBrand, parseIconName } from "../../../scripts/catalog/icon-sets";
import { type IconifySet, iconToSvg, resolveIcon } from "../../../scripts/catalog/iconify";
import { assignIds } from "../../../scripts/catalog/ids";
import { builderFiles, inputsVersion } from "../../../scripts/catalog/inputs";
import { compactKey, siSlugify, TieredIndex } from "../../../scripts/catalog/keys";

describe("iconify icons to SVG", () => {
  const set: IconifySet = {
    prefix: "t",
    width: 256,
    height: 256,
    icons: {
      square: { body: '<path d="M0 0h256v256H0z"/>' },
      wide: { body: "<path/>", width: 512, height: 110 },
      shifted: { body: "<path/>", left: 29, top: 15, height: 255.5 },
      linked: { body: '<use xlink:href="#a"/>' },
    },
    aliases: {
      old: { parent: "wide" },
      flipped: { parent: "square", hFlip: true },
      chained: { parent: "old", width: 100 },
    },
  };
  test("set defaults, own dimensions and left/top make the viewBox", () => {
    expect(iconToSvg(resolveIcon(set, "square")!, "Sq")).toContain('viewBox="0 0 256 256"');
    expect(iconToSvg(resolveIcon(set, "wide")!, "W")).toContain('viewBox="0 0 512 110"');
    expect(iconToSvg(resolveIcon(set, "shifted")!, "S")).toContain('viewBox="29 15 256 255.5"');
  });
  test("aliases resolve to their parent, own props win, flips become transforms", () => {
    expect(resolveIcon(set, "old")?.width).toBe(512);
    expect(resolveIcon(set, "chained")?.width).toBe(100);
    expect(resolveIcon(set, "chained")?.height).toBe(110);
    expect(iconToSvg(resolveIcon(set, "flipped")!, "F")).toContain("scale(-1 1)");
    expect(resolveIcon(set, "missing")).toBeNull();
  });
  test("declares xlink when the body uses it and escapes the title", () => {
    const svg = iconToSvg(resolveIcon(set, "linked")!, "A & <B>");
    expect(svg).toContain('xmlns:xlink="http://www.w3.org/1999/xlink"');
    expect(svg).toContain("<title>A &amp; &lt;B&gt;</title>");
  });
});

describe("names and matching", () => {
  test("icon names split into base and modifiers", () => {
    expect(parseIconName("logos", "slack-icon")).toEqual({
      base: "slack",
      mods: new Set(["icon"]),
    });
    expect(parseIconName("logos", "whatsapp-monochrome-icon").base).toBe("whatsapp");
    expect(parseIconName("logos", "google-gmail-2020").base).toBe("google-gmail");
    expect(parseIconName("logos", "x-ai").base).toBe("x-ai");
    expect(parseIconName("devicon", "react-wordmark").mods.has("wordmark")).toBe(true);
    expect(parseIconName("skill-icons", "vuejs-dark").base).toBe("vuejs");
  });
  test("simple-icons slug rules", () => {
    expect(siSlugify("Node.js")).toBe("nodedotjs");
    expect(siSlugify("C++")).toBe("cplusplus");
    expect(siSlugify("AT&T")).toBe("atandt");
    expect(compactKey("Active-Campaign")).toBe("activecampaign");
  });
  test("only exact, unambiguous keys match (no meta/metabase, no c/c++ guess)", () => {
    const idx = new TieredIndex<string>();
    idx.add(0, "meta", "meta");
    idx.add(0, "metabase", "metabase");
    idx.add(2, "c", "c");
    idx.add(2, "c", "cplusplus");
    idx.add(3, "terraform", "opentofu");
    idx.add(0, "terraform", "terraform");
    expect(idx.find("meta")).toBe("meta");
    expect(idx.find("metabase")).toBe("metabase");
    expect(idx.find("metab")).toBeUndefined();
    expect(idx.find("c")).toBeUndefined();
    expect(idx.find("terraform")).toBe("terraform");
  });
});

describe("ids", () => {
  test("append-only: known ids kept, new slugs get max+1 in sorted order, nothing reused", () => {
    const { ids, added } = assignIds({ github: 1, gone: 7 }, ["zeta", "github", "alpha"]);
    expect(ids).toEqual({ github: 1, gone: 7, alpha: 8, zeta: 9 });
    expect(added).toEqual(["alpha", "zeta"]);
  });
});

describe("domains", () => {
  const brand = (
    id: number,
    slug: string,
    keys: string[],
    sourceUrl: string | null,
    si = true,
  ): DomainBrand => ({
    id,
    slug,
    keys: new Set([slug, ...keys]),
    fromSimpleIcons: si,
    sourceUrl,
    otherUrls: [],
  });
  test("registrable domain from the source URL", () => {
    const b = brand(1, "stripe", [], "https://stripe.com/newsroom/information");
    expect(claimsFromUrl(b, b.sourceUrl!)).toEqual([{ domain: "stripe.com", strength: 3 }]);
    const d = brand(2, "dassaultsystemes", [], "https://www.3ds.com/statics/logo");
    expect(claimsFromUrl(d, d.sourceUrl!)).toEqual([{ domain: "3ds.com", strength: 1 }]);
  });
  test("hosting sites only for their own brand; user sites only when they name the brand", () => {
    const other = brand(1, "foo", [], "https://github.com/foo/logo");
    expect(claimsFromUrl(other, other.sourceUrl!)).toEqual([]);
    const gh = brand(2, "github", [], "https://github.com/logos");
    expect(claimsFromUrl(gh, gh.sourceUrl!)).toEqual([{ domain: "github.com", strength: 3 }]);
    const wiki = brand(3, "bar", [], "https://commons.wikimedia.org/wiki/File:Bar.svg");
    expect(claimsFromUrl(wiki, wiki.sourceUrl!)).toEqual([]);
    const pages = brand(4, "folium", [], "https://python-visualization.github.io/folium/");
    expect(claimsFromUrl(pages, pages.sourceUrl!)).toEqual([]);
    const own = brand(5, "kimi", [], "https://kimi.github.io/");
    expect(claimsFromUrl(own, own.sourceUrl!)).toEqual([{ domain: "kimi.github.io", strength: 3 }]);
  });
  test("brand portals and help desks give no domain, not even the customer's subdomain", () => {
    for (const url of [
      "https://algolia.frontify.com/d/1AZwVNcFZiu7/style-guide",
      "https://mazedesign.notion.site/Press-Kit",
      "https://hootsuite.widencollective.com/portals/x",
    ]) {
      const slug = /^https:\/\/(\w+)\./.exec(url)?.[1] ?? "";
      const b = brand(1, slug, [], url);
      expect(claimsFromUrl(b, url)).toEqual([]);
    }
    const frontify = brand(2, "frontify", [], "https://brand.frontify.com");
    expect(claimsFromUrl(frontify, frontify.sourceUrl!)).toEqual([
      { domain: "frontify.com", strength: 3 },
    ]);
  });
  test("brand subdomains are kept and the parent domain is left to the parent", () => {
    const kafka = brand(1, "apachekafka", ["kafka"], "https://kafka.apache.org/logos");
    expect(claimsFromUrl(kafka, kafka.sourceUrl!)).toEqual([
      { domain: "kafka.apache.org", strength: 3 },
    ]);
    const fonts = brand(2, "googlefonts", [], "https://fonts.google.com/about");
    expect(claimsFromUrl(fonts, fonts.sourceUrl!)).toEqual([
      { domain: "fonts.google.com", strength: 3 },
    ]);
  });
  test("web.archive.org links are unwrapped", () => {
    const b = brand(1, "oldco", [], "https://web.archive.org/web/2020/https://www.oldco.com/brand");
    expect(claimsFromUrl(b, b.sourceUrl!)).toEqual([{ domain: "oldco.com", strength: 3 }]);
  });
  test("clashes: override > brand named by the domain > simple-icons > lowest id; 3+ unnamed: nobody", () => {
    const brands = [
      brand(5, "apache", [], "https://www.apache.org/foundation/press/kit"),
      brand(2, "apachekafka", ["kafka"], "https://www.apache.org/logos/kafka"),
      brand(3, "aqua", [], "https://www.aquasec.com/brand"),
      brand(1, "trivy", [], "https://www.aquasec.com/trivy"),
      brand(6, "chrysler", [], "https://www.stellantis.com/a"),
      brand(7, "citroen", [], "https://www.stellantis.com/b"),
      brand(8, "opel", [], "https://www.stellantis.com/c"),
      brand(9, "newco", [], null, false),
      brand(10, "oldname", [], "https://newco.com/brand"),
    ];
    const { domains, report } = assignDomains(brands, {
      newco: ["newco.com"],
      opel: ["!stellantis.com"],
    });
    expect(domains.get("apache")).toEqual(["apache.org"]);
    expect(domains.get("apachekafka")).toBeUndefined();
    expect(domains.get("trivy")).toEqual(["aquasec.com"]);
    expect(domains.get("newco")).toEqual(["newco.com"]);
    expect(domains.get("oldname")).toBeUndefined();
    expect(domains.get("opel")).toBeUndefined();
    const all = [...domains.values()].flat();
    expect(new Set(all).size).toBe(all.length);
    const clash = report.contested.find((c) => c.domain === "apache.org");
    expect(clash?.rule).toBe("domain names the brand");
    // opel removed its claim: two unnamed claimants left, so the lowest id wins
    expect(domains.get("chrysler")).toEqual(["stellantis.com"]);
  });
  test("an override given to two brands is an error", () => {
    expect(() =>
      assignDomains([brand(1, "a", [], null), brand(2, "b", [], null)], {
        a: ["x.com"],
        b: ["x.com"],
      }),
    ).toThrow();
  });
});

describe("alias overrides", () => {
  const draft = (slug: string, name: string, aliases: string[] = []): DraftBrand => ({
    key: slug,
    slug,
    name,
    aliases,
    hex: null,
    sourceUrl: null,
    guidelinesUrl: null,
    extraUrls: [],
    keys: new Set([slug]),
    primaryKeys: new Set([slug]),
    sources: new Set(),
    siSvg: null,
    candidates: [],
  });
  test("adds aliases once, never the name, and their keys", () => {
    const vscode = draft("visualstudiocode", "Visual Studio Code", ["VS Code"]);
    const added = applyAliasOverrides([vscode], {
      $comment: "x",
      visualstudiocode: ["vs code", "VSCode", "Visual Studio Code"],
    });
    expect(added).toBe(1);
    expect(vscode.aliases).toEqual(["VS Code", "VSCode"]);
    expect(vscode.keys.has("vscode")).toBe(true);
  });
  test("an unknown slug or an alias naming another brand is an error", () => {
    const brands = [draft("kubernetes", "Kubernetes"), draft("k8s", "K8s")];
    expect(() => applyAliasOverrides(brands, { nope: ["x"] })).toThrow();
    expect(() => applyAliasOverrides(brands, { kubernetes: ["K8s"] })).toThrow();
  });
});

describe("catalog version", () => {
  test("covers every fixture file, new ones included", () => {
    const root = mkdtempSync(join(tmpdir(), "catalog-version-"));
    try {
      mkdirSync(join(root, "scripts/catalog"), { recursive: true });
      mkdirSync(join(root, "fixtures"));
      writeFileSync(join(root, "fixtures/brand-ids.json"), "{}");
      const first = inputsVersion(root);
      writeFileSync(join(root, "fixtures/alias-overrides.json"), "{}");
      const second = inputsVersion(root);
      expect(second).not.toBe(first);
      writeFileSync(join(root, "fixtures/alias-overrides.json"), '{"a":["b"]}');
      expect(inputsVersion(root)).not.toBe(second);
      expect(builderFiles(root)).toContain("fixtures/alias-overrides.json");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
  test("the real builder's inputs include the mono code and all fixtures", () => {
    const files = builderFiles(join(import.meta.dir, "../../.."));
    for (const f of [
      "scripts/catalog/mono.ts",
      "fixtures/alias-overrides.json",
      "fixtures/mono-overrides.json",
      "fixtures/domain-overrides.json",
      "fixtures/brand-ids.json",
    ]) {
      expect(files).toContain(f);
    }
  });
});
