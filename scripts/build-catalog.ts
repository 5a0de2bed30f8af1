/**
 * Builds the brand catalog (src/catalog/built-catalog.ts BuiltCatalog) from npm data packages:
 * simple-icons + @iconify-json/{logos,devicon,skill-icons}, plus the curated fixtures/*.json.
 * Brands without a mono mark get one derived from their icon or colour artwork where that is
 * faithful (scripts/catalog/mono.ts). See scripts/catalog/*.ts.
 *
 *   bun scripts/build-catalog.ts             build build/catalog.json (or $CATALOG_FILE) and the
 *                                            catalog database beside it (build/catalog.sqlite)
 *   bun scripts/build-catalog.ts --if-stale  do nothing when the catalog matches the inputs
 *
 * Progress goes to stderr, one line per phase. Every output file is written to a temp file
 * and renamed, so concurrent runs never leave a half-written file behind.
 */
import { join, resolve } from "node:path";
import { builtVersion, inputsVersion } from "./catalog/inputs";

const ROOT = resolve(import.meta.dir, "..");
const CATALOG_FILE = process.env.CATALOG_FILE
  ? resolve(process.env.CATALOG_FILE)
  : join(ROOT, "build", "catalog.json");
const started = performance.now();

/** load sources -> merge -> normalise -> variants -> enrich -> write (scripts/catalog/steps/) */
async function build(): Promise<void> {
  const { buildPaths, phaseLogger } = await import("./catalog/steps/context");
  const { loadFixtures } = await import("./catalog/steps/load");
  const { loadIds } = await import("./catalog/ids");
  const { mergeSources, mergeSummary } = await import("./catalog/steps/merge");
  const { checkSlugs, chooseArtwork, idsFor, optimize, optimizeJobs } = await import(
    "./catalog/steps/normalise"
  );
  const { buildVariants, checkOverrideSlugs } = await import("./catalog/steps/variants");
  const { enrich } = await import("./catalog/steps/enrich");
  const { writeCatalog } = await import("./catalog/steps/write");
  const paths = buildPaths(ROOT, CATALOG_FILE);
  const phase = phaseLogger(started);

  const fixtures = loadFixtures(ROOT);
  const merged = mergeSources(ROOT, fixtures, loadIds(paths.idsFile));
  const drafts = merged.brands;
  phase("merge", mergeSummary(merged));

  const { usable, dropped, undrawn } = chooseArtwork(drafts, fixtures.artwork);
  const inputs = optimizeJobs(usable);
  phase(
    "variants",
    `${inputs.length} SVGs for ${usable.length} brands (${dropped} without usable artwork dropped, ${undrawn.length} marks that draw nothing left out), ${merged.aliasCount} curated aliases`,
  );
  const slugs = usable.map((c) => c.draft.slug);
  checkSlugs(slugs);
  const { ids, added } = idsFor(paths.idsFile, slugs);
  phase("ids", `${added.length} new ids, max id ${Math.max(...Object.values(ids))}`);
  const optimized = await optimize(paths, inputs);
  const opt = optimized.stats;
  phase(
    "svgo",
    `${opt.inputs} unique SVGs: ${opt.cached} cached, ${opt.optimized} optimized on ${opt.workers} workers, ${opt.failed} failed; ` +
      `${opt.monos} mono derivations, ${opt.monosCached} cached`,
  );

  checkOverrideSlugs(
    fixtures,
    usable,
    drafts.map((d) => d.slug),
  );
  const { brands, ...variants } = await buildVariants(
    paths,
    usable,
    optimized,
    ids,
    fixtures,
    phase,
  );
  const enriched = enrich(paths, brands, drafts, ids, fixtures, phase, merged.candidates);
  const { applyRedirects, loadRedirects, retiredPins, storedPins } = await import(
    "./catalog/redirects"
  );
  const redirects = loadRedirects(ROOT);
  const issued = loadIds(paths.idsFile);
  const retired = applyRedirects(brands, issued, redirects);
  phase(
    "redirects",
    `${retired.redirected} retired slugs answer with the brand they became; ${retired.unredirected.length} retired without a redirect`,
  );
  // operators' pins on retired brands (the embedded store of DATA_DIR, when there is one)
  const dataDir = process.env.DATA_DIR ?? join(ROOT, "data");
  const pinLines = retiredPins(storedPins(dataDir), brands, issued, redirects);
  phase("pins", `${pinLines.length} pins on retired brands`);
  for (const line of pinLines) console.error(`[catalog]   ${line}`);
  const version = writeCatalog(paths, brands, { merged, variants, enriched, undrawn, retired });
  phase("write", `${CATALOG_FILE} version ${version}`);
  // the readability check: fails the build when more variants fall below the floor
  const { readability, readabilityLimit } = await import("./catalog/readability");
  const check = readability(variants.rules, readabilityLimit(ROOT));
  console.error(
    `[catalog] readability: ${check.count} dark/light variants below the floor (at most ${check.limit}); weakest:`,
  );
  for (const line of check.weakest) console.error(`[catalog]   ${line}`);
  if (check.count > check.limit) {
    console.error(
      "[catalog] readability regressed: fix the artwork or the rules, or raise fixtures/readability.json with a reason",
    );
    process.exit(1);
  }
}

if (process.argv.includes("--if-stale")) {
  const current = builtVersion(CATALOG_FILE);
  if (current && current === inputsVersion(ROOT)) {
    // the catalog database beside it, written from the JSON when missing or of another version
    const { FileCatalogSource } = await import("../src/catalog/store/embedded");
    const db = await new FileCatalogSource(CATALOG_FILE).file();
    console.error(
      `[catalog] up to date (${current}, ${db}), ${Math.round(performance.now() - started)} ms`,
    );
    process.exit(0);
  }
}
await build();
