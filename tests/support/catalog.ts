/**
 * The built catalog for tests, parsed once per test file that asks for it (each file runs in a
 * fresh global) and shared read-only: every app the tests make serves the same objects,
 * frozen so that a test or a service that wrote into them would fail instead of leaking state
 * into the next file.
 *
 * `smallCatalogFile()` is a purpose-built subset of the real catalog for suites that copy the
 * catalog somewhere slow (seeding MongoDB, spawning service processes) and only read a few
 * well-known brands from it.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Brand, BuiltCatalog } from "../../src/catalog/built-catalog";
import { FileCatalogSource } from "../../src/catalog/store/embedded";
import type { CatalogSource } from "../../src/catalog/store/port";
import { tempDir } from "./temp";

/** The real built catalog (npm test builds it first); override with CATALOG_FILE. */
export const CATALOG_FILE = resolve(
  process.env.CATALOG_FILE ?? join(import.meta.dir, "../../build/catalog.json"),
);

let shared: { file: string; mtimeMs: number; catalog: BuiltCatalog } | null = null;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The parsed, frozen catalog of CATALOG_FILE (parsed again only if the file changed). */
export function builtCatalog(): BuiltCatalog {
  const { mtimeMs } = statSync(CATALOG_FILE);
  if (!shared || shared.mtimeMs !== mtimeMs) {
    const catalog = deepFreeze(JSON.parse(readFileSync(CATALOG_FILE, "utf8")) as BuiltCatalog);
    shared = { file: CATALOG_FILE, mtimeMs, catalog };
  }
  return shared.catalog;
}

/**
 * A CatalogSource over the shared catalog: the catalog database the build wrote beside
 * CATALOG_FILE (one file every app of the run opens read-only), and `load()` the parsed JSON.
 */
export function sharedCatalogSource(): CatalogSource & { load(): Promise<BuiltCatalog> } {
  const file = new FileCatalogSource(CATALOG_FILE);
  return {
    file: () => file.file(),
    load: async () => builtCatalog(),
    version: async () => builtCatalog().version,
  };
}

/** Brands the suites on the small catalog ask for by slug. */
const SMALL_CATALOG_SLUGS = [
  "github",
  "gitlab",
  "npm",
  "stripe",
  "google",
  "slack",
  "microsoft",
  "netflix",
  "spotify",
  "apple",
  "figma",
  "nike",
  "cocacola",
  "airbnb",
];

let small: string | null = null;

/**
 * A catalog file of a few hundred real brands: the named ones, the most-aliased brands with
 * artwork, and some directory entries without artwork, under a version of its own. Written once
 * per run.
 */
export function smallCatalogFile(): string {
  // (tests/setup.ts removes temp dirs after each file when files run on parallel workers)
  if (small && existsSync(small)) return small;
  const full = builtCatalog();
  const picked = new Map<number, Brand>();
  const bySlug = new Map(full.brands.map((b) => [b.slug, b]));
  for (const slug of SMALL_CATALOG_SLUGS) {
    const b = bySlug.get(slug);
    if (b) picked.set(b.id, b);
  }
  const withArt = full.brands.filter((b) => Object.keys(b.variants).length > 0);
  const without = full.brands.filter((b) => Object.keys(b.variants).length === 0);
  for (const b of withArt.slice(0, 250)) picked.set(b.id, b);
  for (const b of without.slice(0, 50)) picked.set(b.id, b);
  const catalog: BuiltCatalog = {
    version: `small-${full.version}`,
    builtAt: full.builtAt,
    brands: [...picked.values()].sort((a, b) => a.id - b.id),
  };
  const file = join(tempDir("bapi-catalog-"), "catalog.json");
  writeFileSync(file, JSON.stringify(catalog));
  small = file;
  return file;
}

/** A brand record for unit tests: a directory-style entry (no artwork) unless told otherwise. */
export function brandOf(slug: string, over: Partial<Brand> = {}): Brand {
  return {
    id: 1,
    slug,
    name: slug,
    brandColor: null,
    darkModeColor: null,
    contrastTextColor: null,
    colors: [],
    aliases: [],
    domains: [],
    sourceUrl: null,
    guidelinesUrl: null,
    sources: ["simple-icons"],
    variants: {},
    verifiedAt: null,
    ...over,
  };
}
