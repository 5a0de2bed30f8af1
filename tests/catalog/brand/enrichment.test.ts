/**
 * Background enrichment: derivation on real catalog brands, the job queue (dedup, bound,
 * failures), persistence and replay through the embedded store, and the route effect.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Brand, BuiltCatalog } from "../../../src/catalog/built-catalog";
import { contrastRatio, DARK_SURFACE } from "../../../src/catalog/colors";
import {
  applyEnrichment,
  DERIVED_SOURCE,
  deriveEnrichment,
  EnrichmentService,
  enrichmentBasis,
  isEnriched,
  recolorMono,
} from "../../../src/catalog/enrichment/service";
import { EmbeddedEnrichmentStore } from "../../../src/catalog/enrichment/store/embedded";
import type { EnrichmentStore } from "../../../src/catalog/enrichment/store/port";
import { CatalogService } from "../../../src/catalog/service";
import { FileCatalogSource } from "../../../src/catalog/store/embedded";
import { setLogLevel } from "../../../src/platform/log";
import { CATALOG_FILE, makeApp, tempDir } from "../../support/app";
import { openDatabase } from "../../support/db";
import { until } from "../../support/wait";

let built: BuiltCatalog;
const raw = (slug: string) => built.brands.find((b) => b.slug === slug) as Brand;
const rootFill = (svg: string) => /^<svg[^>]*\sfill="#([0-9a-f]{6})"/.exec(svg)?.[1];
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** A catalog over STRIPPED_FILE's database (written once), with an overlay of its own. */
async function freshCatalog() {
  const c = new CatalogService(new FileCatalogSource(STRIPPED_FILE));
  await c.load();
  return c;
}

/** Brands with a mono mark that still lack dark and light (the usual case in the build). */
function needy(n: number): Brand[] {
  const out = built.brands
    .filter((b) => b.variants.mono && !b.variants.dark && !b.variants.light)
    .slice(0, n);
  if (out.length < n) throw new Error(`the built catalog has ${out.length} such brands, not ${n}`);
  return out;
}

/**
 * The build now gives every brand dark and light variants (scripts/catalog/variant-rules.ts), so the
 * enrichment is exercised on a catalog without them: the case of brands that reach the
 * catalog without those variants (STRIPPED_FILE for the app-level tests).
 */
let STRIPPED_FILE = "";
beforeAll(async () => {
  setLogLevel("error");
  built = await new FileCatalogSource(CATALOG_FILE).load();
  for (const b of built.brands) {
    for (const v of ["dark", "light"] as const) {
      if (b.variants[v]?.source.match(/^(recolored|artwork):/)) delete b.variants[v];
    }
  }
  // the tests' brands and a few dozen more that need enrichment: a catalog database of the
  // whole catalog would take seconds to write and tells these tests nothing more
  const kept = new Set([...needy(40), ...["github", "gitlab", "stripe"].map(raw)]);
  STRIPPED_FILE = join(tempDir(), "catalog.json");
  writeFileSync(STRIPPED_FILE, JSON.stringify({ ...built, brands: [...kept] }));
});

describe("derivation", () => {
  test("dark and light variants from the mono mark, colored for their backgrounds", () => {
    const gh = raw("github");
    expect(gh.variants.mono).toBeDefined();
    expect(gh.variants.dark).toBeUndefined();
    const r = deriveEnrichment(gh, new Date("2026-01-02T03:04:05.000Z"));
    const dark = r.variants.dark;
    const light = r.variants.light;
    if (!dark || !light) throw new Error("expected dark and light");
    const darkHex = rootFill(dark.svg) as string;
    const lightHex = rootFill(light.svg) as string;
    // dark: the exact brand colour when it reaches 3:1 on the dark surface, else white
    // (GitHub's near-black: white); light: the same on white, else black
    expect(darkHex).toBe("ffffff");
    const bc = gh.brandColor as string;
    expect(lightHex).toBe(contrastRatio(bc, "ffffff") >= 3 ? bc : "000000");
    // never a lightened or darkened brand colour: Coca-Cola red and Spotify green as they are
    for (const slug of ["cocacola", "spotify"]) {
      const b = raw(slug);
      const fill = rootFill(deriveEnrichment(b, new Date()).variants.dark?.svg ?? "");
      expect(contrastRatio(b.brandColor as string, DARK_SURFACE)).toBeGreaterThanOrEqual(3);
      expect([slug, fill]).toEqual([slug, b.brandColor as string]);
    }
    for (const v of [dark, light]) {
      expect(v.source).toBe(DERIVED_SOURCE);
      expect(v.sha256).toBe(sha(v.svg));
      expect(v.svg).toContain("<path");
      expect(v.svg).not.toContain("<script");
    }
    expect(r.verifiedAt).toBe("2026-01-02T03:04:05.000Z");
    expect(r.basis).toBe(enrichmentBasis(gh));
    expect(r.colors.map((c) => c.role)).toEqual(
      expect.arrayContaining(["brand", "dark-mode", "contrast-text"]),
    );
  });

  test("a light brand color falls back to black on light backgrounds", () => {
    const light = built.brands.find(
      (b) => b.variants.mono && b.brandColor && contrastRatio(b.brandColor, "ffffff") < 3,
    ) as Brand;
    expect(light).toBeDefined();
    expect(rootFill(deriveEnrichment(light).variants.light?.svg ?? "")).toBe("000000");
  });

  test("recoloring replaces every paint of a mono mark that has its own fills", () => {
    const painted = built.brands.find((b) => /\sfill="#/.test(b.variants.mono?.svg ?? "")) as Brand;
    expect(painted).toBeDefined();
    const out = recolorMono(painted.variants.mono?.svg as string, "123456").svg;
    const fills = [...out.matchAll(/fill="([^"]+)"/g)].map((m) => m[1]);
    expect(fills.length).toBeGreaterThan(1);
    expect(fills.every((f) => f === "#123456" || f === "none")).toBe(true);
  });

  test("same inputs give the same variants (idempotent)", () => {
    const a = deriveEnrichment(raw("stripe"));
    const b = deriveEnrichment(raw("stripe"));
    expect(a.variants.dark?.sha256).toBe(b.variants.dark?.sha256 as string);
    expect(a.variants.light?.sha256).toBe(b.variants.light?.sha256 as string);
    expect(a.basis).toBe(b.basis);
  });

  test("the brand's own data wins and a stale record does not apply", () => {
    const gh = raw("github");
    const ownDark = { svg: gh.variants.mono?.svg as string, sha256: "x", source: "iconify:logos" };
    const withDark: Brand = { ...gh, variants: { ...gh.variants, dark: ownDark } };
    const r = deriveEnrichment(withDark);
    expect(r.variants.dark).toBeUndefined();
    expect(r.variants.light).toBeDefined();
    const applied = applyEnrichment(withDark, r) as Brand;
    expect(applied.variants.dark).toBe(ownDark);
    expect(isEnriched(applied)).toBe(false); // own dark has a bad sha: not verified
    expect(applyEnrichment({ ...gh, brandColor: "ff0000" }, deriveEnrichment(gh))).toBeNull();
  });

  test("an SVG that no longer matches its sha256 fails verification", () => {
    const gh = raw("github");
    const mono = gh.variants.mono as NonNullable<Brand["variants"]["mono"]>;
    const tampered: Brand = { ...gh, variants: { mono: { ...mono, sha256: "0".repeat(64) } } };
    expect(deriveEnrichment(tampered).verifiedAt).toBeNull();
    expect(deriveEnrichment(gh).verifiedAt).not.toBeNull();
  });

  test("an enriched brand needs nothing more", () => {
    const gh = raw("github");
    expect(isEnriched(gh)).toBe(false);
    expect(isEnriched(applyEnrichment(gh, deriveEnrichment(gh)) as Brand)).toBe(true);
  });
});

describe("job queue", () => {
  test("deduplicated per brand, result applied to the catalog and stored", async () => {
    const dir = tempDir();
    const storeDb = openDatabase(dir);
    const store = new EmbeddedEnrichmentStore(storeDb);
    const catalog = await freshCatalog();
    const svc = new EnrichmentService(store, catalog);
    await svc.start();
    const gh = catalog.brand("github") as Brand;
    expect(svc.request(gh)).toBe(true);
    expect(svc.request(gh)).toBe(false);
    expect(svc.request(catalog.brand("github") as Brand)).toBe(false);
    expect(svc.backlog).toBe(1);
    await svc.idle();
    expect(svc.backlog).toBe(0);
    const after = catalog.brand("github") as Brand;
    expect(after.variants.dark?.source).toBe(DERIVED_SOURCE);
    expect(after.variants.light?.source).toBe(DERIVED_SOURCE);
    expect(after.verifiedAt).not.toBeNull();
    expect(svc.request(after)).toBe(false);
    expect((await store.all()).map((r) => r.slug)).toEqual(["github"]);
    storeDb.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("bounded concurrency", async () => {
    const dir = tempDir();
    const innerDb = openDatabase(dir);
    const inner = new EmbeddedEnrichmentStore(innerDb);
    let inFlight = 0;
    let maxInFlight = 0;
    // saves are held until the test opens the gate: the jobs pile up at the bound
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const gated: EnrichmentStore = {
      all: () => inner.all(),
      async save(r) {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await gate;
        inFlight--;
        return inner.save(r);
      },
    };
    const catalog = await freshCatalog();
    const svc = new EnrichmentService(gated, catalog, 2);
    await svc.start();
    const brands = needy(6);
    for (const b of brands) expect(svc.request(b)).toBe(true);
    await until(() => inFlight === 2, 10_000, "two saves in flight");
    open();
    await svc.idle();
    expect(maxInFlight).toBe(2);
    for (const b of brands) expect(catalog.brand(b.slug)?.variants.dark).toBeDefined();
    innerDb.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a failing store never throws into the caller and is not retried at once", async () => {
    const failing: EnrichmentStore = {
      all: async () => [],
      save: async () => {
        throw new Error("store down");
      },
    };
    const catalog = await freshCatalog();
    const svc = new EnrichmentService(failing, catalog);
    await svc.start();
    const gh = catalog.brand("github") as Brand;
    expect(svc.request(gh)).toBe(true);
    await svc.idle();
    expect(catalog.brand("github")?.variants.dark).toBeUndefined();
    expect(svc.needs(gh)).toBe(false); // cool-down after a failure
  });

  test("a brand that changes while its job derives (new artwork) is derived again from the new one", async () => {
    const dir = tempDir();
    const storeDb = openDatabase(dir);
    const store = new EmbeddedEnrichmentStore(storeDb);
    const catalog = await freshCatalog();
    const svc = new EnrichmentService(store, catalog);
    await svc.start();
    // the first derivation waits until the brand has changed
    let changed: () => void = () => {};
    const gate = new Promise<void>((resolve) => (changed = resolve));
    const derived: string[] = [];
    svc.useDeriver(async (b) => {
      derived.push(b.variants.mono?.sha256 ?? "");
      if (derived.length === 1) await gate;
      return deriveEnrichment(b);
    });
    const gh = catalog.brand("github") as Brand;
    expect(svc.request(gh)).toBe(true);
    await until(() => derived.length > 0, 10_000, "the first derivation");
    // new artwork arrives (as a discovery applies it): another mono mark
    const other = raw("gitlab").variants.mono as NonNullable<Brand["variants"]["mono"]>;
    const updated: Brand = { ...gh, variants: { ...gh.variants, mono: other } };
    catalog.update(updated);
    expect(svc.request(catalog.brand("github") as Brand)).toBe(false); // the job is pending
    changed();
    await svc.idle();
    expect(derived).toEqual([gh.variants.mono?.sha256 ?? "", other.sha256]);
    const after = catalog.brand("github") as Brand;
    expect(isEnriched(after)).toBe(true);
    expect(after.variants.mono).toEqual(other);
    expect(after.variants.dark?.source).toBe(DERIVED_SOURCE);
    const expected = applyEnrichment(updated, deriveEnrichment(updated)) as Brand;
    expect(after).toEqual({ ...expected, verifiedAt: after.verifiedAt });
    storeDb.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("idle() resolves at once when nothing is queued", async () => {
    const svc = new EnrichmentService(
      { all: async () => [], save: async (r) => r },
      await freshCatalog(),
    );
    await svc.start();
    await svc.idle();
    expect(svc.backlog).toBe(0);
  });
});

describe("persistence and replay", () => {
  test("records are replayed at start and after a reload, and go stale when inputs change", async () => {
    const dir = tempDir();
    const firstDb = openDatabase(dir);
    const first = new EmbeddedEnrichmentStore(firstDb);
    const c1 = await freshCatalog();
    const s1 = new EnrichmentService(first, c1);
    await s1.start();
    s1.request(c1.brand("stripe") as Brand);
    await s1.idle();
    firstDb.close();

    // a restart: a new store and catalog over the same DATA_DIR
    const secondDb = openDatabase(dir);
    const second = new EmbeddedEnrichmentStore(secondDb);
    const c2 = await freshCatalog();
    expect((await second.all()).map((r) => r.slug)).toEqual(["stripe"]);
    const s2 = new EnrichmentService(second, c2);
    await s2.start();
    const stripe = c2.brand("stripe") as Brand;
    expect(stripe.variants.dark?.source).toBe(DERIVED_SOURCE);
    expect(s2.needs(stripe)).toBe(false);

    // a reload of the same catalog re-applies; a changed brand color makes the record stale
    await c2.load();
    expect(c2.brand("stripe")?.variants.dark).toBeDefined();
    // (a new build of Stripe alone: writing the whole catalog again would only cost time)
    c2.install({
      ...built,
      version: "changed",
      brands: [{ ...raw("stripe"), brandColor: "010203" }],
    });
    const changed = c2.brand("stripe") as Brand;
    expect(changed.variants.dark).toBeUndefined();
    expect(s2.needs(changed)).toBe(true);
    secondDb.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the store keeps the first record for the same inputs", async () => {
    const dir = tempDir();
    const storeDb = openDatabase(dir);
    const store = new EmbeddedEnrichmentStore(storeDb);
    const gh = raw("github");
    const a = await store.save(deriveEnrichment(gh, new Date("2026-01-01T00:00:00Z")));
    const b = await store.save(deriveEnrichment(gh, new Date("2026-02-01T00:00:00Z")));
    expect(b.at).toBe(a.at);
    const other = await store.save(deriveEnrichment({ ...gh, brandColor: "010203" }));
    expect(other.basis).not.toBe(a.basis);
    expect((await store.all()).map((r) => r.basis)).toEqual([other.basis]);
    storeDb.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("through GET /v1/brand", () => {
  let app: Awaited<ReturnType<typeof makeApp>>;
  beforeAll(async () => {
    app = await makeApp({ CATALOG_FILE: STRIPPED_FILE });
  });
  afterAll(() => app.close());

  test("the first answer goes out at once; a later one shows the added variants", async () => {
    const key = await app.key("pro");
    const darkBefore = await app.get("/v1/svg/github?variant=dark", key);
    expect(darkBefore.headers.get("x-svg-variant")).toBe("mono"); // falls back: none stored yet
    const first = (await (await app.get("/v1/brand?domain=github.com", key)).json()) as {
      variants: string[];
      verified: boolean;
      verifiedAt: string | null;
    };
    expect(first.variants).not.toContain("dark");
    expect(first.variants).not.toContain("light");
    expect(first.verified).toBe(false);
    expect(first.verifiedAt).toBeNull();

    await app.deps.enrichment.idle();
    const second = (await (await app.get("/v1/brand?domain=github.com", key)).json()) as {
      variants: string[];
      verified: boolean;
      verifiedAt: string;
    };
    expect(second.variants).toEqual(expect.arrayContaining([...first.variants, "dark", "light"]));
    expect(second.variants.length).toBe(first.variants.length + 2);
    expect(second.verified).toBe(true);
    expect(new Date(second.verifiedAt).toISOString()).toBe(second.verifiedAt);
    expect((await app.deps.store.enrichment.all()).map((r) => r.slug)).toContain("github");
    // the SVG route serves the derived variant now
    const dark = await app.get("/v1/svg/github?variant=dark", key);
    expect(dark.status).toBe(200);
    expect(dark.headers.get("x-svg-variant")).toBe("dark");
    const served = rootFill(await dark.text());
    expect(served).toMatch(/^[0-9a-f]{6}$/);
    expect(served).toBe(rootFill(app.deps.catalog.brand("github")?.variants.dark?.svg ?? ""));
    // no further job for an enriched brand
    await app.get("/v1/brand?domain=github.com", key);
    expect(app.deps.enrichment.backlog).toBe(0);
  });
});

describe("through GET /v1/brand, with a store that is down", () => {
  test("a failing enrichment never fails the request", async () => {
    const down: EnrichmentStore = {
      all: async () => [],
      save: async () => Promise.reject(new Error("store down")),
    };
    const app = await makeApp(
      { CATALOG_FILE: STRIPPED_FILE },
      {
        customize: async (deps) => {
          deps.enrichment = new EnrichmentService(down, deps.catalog);
          await deps.enrichment.start();
        },
      },
    );
    try {
      const key = await app.key("pro");
      const first = await app.get("/v1/brand?domain=stripe.com", key);
      expect(first.status).toBe(200);
      await app.deps.enrichment.idle();
      const again = await app.get("/v1/brand?domain=stripe.com", key);
      expect(again.status).toBe(200);
      expect(((await again.json()) as { variants: string[] }).variants).not.toContain("dark");
    } finally {
      await app.close();
    }
  });
});
