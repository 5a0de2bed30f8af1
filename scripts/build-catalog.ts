/**
 * Builds the brand catalog (src/catalog/types.ts BuiltCatalog) from npm data packages:
 * simple-icons + @iconify-json/{logos,devicon,skill-icons}, plus the curated fixtures/*.json.
 * Brands without a mono mark get one derived from their icon or colour artwork where that is
 * faithful (scripts/catalog/mono.ts). See scripts/catalog/*.ts.
 *
 *   bun scripts/build-catalog.ts             build build/catalog.json (or $CATALOG_FILE)
 *   bun scripts/build-catalog.ts --if-stale  do nothing when the catalog matches the inputs
 *
 * Progress goes to stderr, one line per phase. Every output file is written to a temp file
 * and renamed, so concurrent runs never leave a half-written file behind.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { builtVersion, inputsVersion, packageVersion } from "./catalog/inputs";

const ROOT = resolve(import.meta.dir, "..");
const CATALOG_FILE = process.env.CATALOG_FILE
  ? resolve(process.env.CATALOG_FILE)
  : join(ROOT, "build", "catalog.json");
const IDS_FILE = join(ROOT, "fixtures", "brand-ids.json");
const OVERRIDES_FILE = join(ROOT, "fixtures", "domain-overrides.json");
const ALIASES_FILE = join(ROOT, "fixtures", "alias-overrides.json");
const MONO_OVERRIDES_FILE = join(ROOT, "fixtures", "mono-overrides.json");
const COLOR_OVERRIDES_FILE = join(ROOT, "fixtures", "color-overrides.json");
const LEGACY_DOMAINS_FILE = join(ROOT, "fixtures", "legacy-domains.json");
const ARTWORK_OVERRIDES_FILE = join(ROOT, "fixtures", "artwork-overrides.json");
const RENDER_CACHE_FILE = join(ROOT, "build", ".render-cache.json");
const PAINT_CACHE_FILE = join(ROOT, "build", ".paint-cache.json");
const ATTRIBUTION_FILE = join(ROOT, "docs", "attribution.md");
const NAMES_FILE = join(ROOT, "fixtures", "name-overrides.json");
const CACHE_FILE = join(ROOT, "build", ".svgo-cache.json");
const REPORT_FILE = join(dirname(CATALOG_FILE), "catalog-report.txt");
const DIRECTORY_PARENTS_FILE = join(ROOT, "fixtures", "directory-parents.json");

const started = performance.now();
let phaseStart = started;
function phase(name: string, detail: string): void {
  const now = performance.now();
  console.error(
    `[catalog] ${name.padEnd(10)} ${detail} (${Math.round(now - phaseStart)} ms, total ${Math.round(now - started)} ms)`,
  );
  phaseStart = now;
}

function writeAtomic(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

async function build(): Promise<void> {
  const { loadAndMerge } = await import("./catalog/merge");
  const { chooseVariants, skillTile } = await import("./catalog/variants");
  const { renderFlagsAll } = await import("./catalog/render-check");
  const { assignIds, formatIds, loadIds } = await import("./catalog/ids");
  const { jobKey, optimizeAll, sha256, withIdPrefix } = await import("./catalog/optimize");
  const { applyAliasOverrides } = await import("./catalog/aliases");
  const { deriveMono } = await import("./catalog/mono");
  const { assignDomains } = await import("./catalog/domains");
  const { deriveBrandColors, dominantColor } = await import("../src/catalog/colors");
  const { recolor } = await import("./catalog/modes");
  const { applyVariantRules } = await import("./catalog/variant-rules");
  type RuleBrand = import("./catalog/variant-rules").RuleBrand;
  /** A stored variant: the raw optimized SVG with its ids prefixed by variant and slug. */
  const storedSvg = (rawSvg: string, variant: string, slug: string, source: string) => {
    const svg = withIdPrefix(rawSvg, `${variant}-${slug}`);
    return { svg, sha256: sha256(svg), source };
  };
  const { VARIANTS } = await import("../src/catalog/types");
  type Brand = import("../src/catalog/types").Brand;

  const { brands: drafts, stats, decisions } = loadAndMerge(ROOT);
  phase(
    "merge",
    `${drafts.length} brands: ${stats.simpleIcons} simple-icons, +${stats.logosNewBrands} logos, ` +
      `+${stats.deviconNewBrands} devicon, +${stats["skill-iconsNewBrands"]} skill-icons, ` +
      `+${stats.lobehubNewBrands} lobehub, +${stats.cibNewBrands} cib, +${stats["fa6-brandsNewBrands"]} fa6-brands, ` +
      `+${stats.bxlNewBrands} bxl, +${stats["streamline-logosNewBrands"]} streamline-logos, +${stats.tablerNewBrands} tabler only`,
  );

  // fixtures/name-overrides.json: display names in brand casing; the data's name stays an alias
  const nameOverrides: Record<string, string> = JSON.parse(readFileSync(NAMES_FILE, "utf8"));
  for (const [slug, name] of Object.entries(nameOverrides)) {
    if (slug.startsWith("$")) continue;
    const draft = drafts.find((d) => d.slug === slug);
    if (!draft) throw new Error(`name override for unknown slug ${slug}`);
    if (draft.name === name) continue;
    if (draft.name.toLowerCase() !== name.toLowerCase() && !draft.aliases.includes(draft.name)) {
      draft.aliases.push(draft.name);
    }
    draft.name = name;
  }
  const aliasCount = applyAliasOverrides(drafts, JSON.parse(readFileSync(ALIASES_FILE, "utf8")));
  // fixtures/artwork-overrides.json: colour artwork decided by looking at the render check
  const artworkOverrides: Record<string, { color: string; why: string }> = JSON.parse(
    readFileSync(ARTWORK_OVERRIDES_FILE, "utf8"),
  );
  const chosen = drafts.map((draft) => {
    const variants = chooseVariants(draft);
    if (artworkOverrides[draft.slug]?.color === "skill-icons") {
      const tile = skillTile(draft);
      if (!tile) throw new Error(`artwork override: ${draft.slug} has no skill-icons tile`);
      variants.color = tile;
      variants.icon = tile;
    }
    return { draft, variants };
  });
  const usable = chosen.filter((c) => Object.keys(c.variants).length > 0);
  // simple-icons get svgo's full preset; iconify bodies were path-optimized by Iconify already
  const job = (art: { svg: string; source: string }, mono = false) => ({
    svg: art.svg,
    paths: art.source === "simple-icons",
    mono,
  });
  // a brand without a mono mark gets one derived from its icon, else its colour artwork
  const monoSources = (v: (typeof usable)[number]["variants"]) =>
    v.mono ? [] : [...new Set([v.icon, v.color])].filter((a) => a !== undefined);
  const inputs = usable.flatMap((c) => {
    const derive = monoSources(c.variants);
    return Object.values(c.variants).flatMap((v) => (v ? [job(v, derive.includes(v))] : []));
  });
  phase(
    "variants",
    `${inputs.length} SVGs for ${usable.length} brands (${chosen.length - usable.length} without usable artwork dropped), ${aliasCount} curated aliases`,
  );

  const slugs = usable.map((c) => c.draft.slug);
  if (new Set(slugs).size !== slugs.length) throw new Error("duplicate slugs");
  const bad = slugs.filter((s) => !/^[a-z0-9][a-z0-9_-]*$/.test(s));
  if (bad.length) throw new Error(`slugs not URL-safe: ${bad.join(", ")}`);
  const { ids, added } = assignIds(loadIds(IDS_FILE), slugs);
  if (added.length) writeAtomic(IDS_FILE, formatIds(ids));
  phase("ids", `${added.length} new ids, max id ${Math.max(...Object.values(ids))}`);

  const pipeline = sha256(
    readFileSync(join(ROOT, "src/catalog/sanitize.ts"), "utf8") +
      JSON.parse(readFileSync(join(ROOT, "node_modules/svgo/package.json"), "utf8")).version,
  );
  const monoVersion = sha256(
    ["scripts/catalog/mono.ts", "scripts/catalog/artwork.ts", "src/catalog/colors.ts"]
      .map((f) => readFileSync(join(ROOT, f), "utf8"))
      .join("\n") + packageVersion(ROOT, "@resvg/resvg-js"),
  );
  const {
    results,
    monos,
    stats: opt,
  } = await optimizeAll(inputs, CACHE_FILE, pipeline, monoVersion);
  phase(
    "svgo",
    `${opt.inputs} unique SVGs: ${opt.cached} cached, ${opt.optimized} optimized on ${opt.workers} workers, ${opt.failed} failed; ` +
      `${opt.monos} mono derivations, ${opt.monosCached} cached`,
  );

  const monoOverrides: { derive: Record<string, string>; skip: Record<string, string> } =
    JSON.parse(readFileSync(MONO_OVERRIDES_FILE, "utf8"));
  const knownSlugs = new Set(usable.map((c) => c.draft.slug));
  for (const slug of [...Object.keys(monoOverrides.derive), ...Object.keys(monoOverrides.skip)]) {
    if (!knownSlugs.has(slug)) throw new Error(`mono override for unknown slug ${slug}`);
  }
  const monoReport = { fromIcon: 0, fromColor: 0, forced: 0, skipped: new Map<string, string>() };
  /**
   * The derived mono mark of a brand without one (ids still carry ID_TOKEN) and its source,
   * or null. The source is "flattened:<artwork source>", never "derived...": the runtime
   * enrichment (src/catalog/enrichment.ts) treats every "derived*" variant as its own output,
   * so it would neither colour dark/light from such a mono mark nor keep it.
   */
  const derivedMono = (
    slug: string,
    v: (typeof usable)[number]["variants"],
  ): { svg: string; source: string } | null => {
    const sources = monoSources(v);
    if (!sources.length) return null;
    const skip = monoOverrides.skip[slug];
    if (skip !== undefined) {
      monoReport.skipped.set(slug, `override: ${skip}`);
      return null;
    }
    const force = monoOverrides.derive[slug] !== undefined;
    let firstReason: string | null = null;
    for (const art of sources) {
      const key = jobKey(job(art));
      const optimized = results.get(key);
      const mono = force && optimized ? deriveMono(optimized, { force }) : monos.get(key);
      if (mono && "svg" in mono) {
        if (force) monoReport.forced++;
        else if (art === v.icon) monoReport.fromIcon++;
        else monoReport.fromColor++;
        return { svg: mono.svg, source: `flattened:${art.source}` };
      }
      firstReason ??= mono?.skipped ?? "could not be processed";
    }
    monoReport.skipped.set(slug, firstReason ?? "no artwork");
    return null;
  };

  const colorOverrides: Record<string, { hex: string; why: string }> = JSON.parse(
    readFileSync(COLOR_OVERRIDES_FILE, "utf8"),
  );
  const RENDER_CHECK_VERSION = sha256(
    readFileSync(join(ROOT, "scripts/catalog/render-check.ts"), "utf8") +
      packageVersion(ROOT, "@resvg/resvg-js"),
  ).slice(0, 12);
  const renderCache: Record<string, string[]> = existsSync(RENDER_CACHE_FILE)
    ? JSON.parse(readFileSync(RENDER_CACHE_FILE, "utf8"))
    : {};
  const nextRenderCache: Record<string, string[]> = {};
  const renderReport: string[] = [];
  const toCheck: {
    slug: string;
    color: Brand["variants"]["color"] & {};
    brandHex: string | null;
  }[] = [];
  for (const slug of Object.keys(artworkOverrides)) {
    if (!slug.startsWith("$") && !drafts.some((d) => d.slug === slug)) {
      throw new Error(`artwork override for unknown slug ${slug}`);
    }
  }
  const brands: Brand[] = [];
  let colorFromArtwork = 0;
  const ruleInputs: RuleBrand[] = [];
  for (const { draft, variants } of usable) {
    const stored: Brand["variants"] = {};
    const raw: RuleBrand["raw"] = {};
    for (const variant of VARIANTS) {
      const art = variants[variant];
      const optimized = art ? results.get(jobKey(job(art))) : null;
      if (!art || !optimized) continue;
      raw[variant] = { svg: optimized, source: art.source };
      stored[variant] = storedSvg(optimized, variant, draft.slug, art.source);
    }
    const derived = derivedMono(draft.slug, variants);
    if (derived) {
      raw.mono = derived;
      stored.mono = storedSvg(derived.svg, "mono", draft.slug, derived.source);
    }
    const monoRaw = raw.mono?.svg;
    if (!Object.keys(stored).length) continue;
    let brandHex = draft.hex;
    let colorSource = "simple-icons";
    const override = colorOverrides[draft.slug];
    if (override) {
      brandHex = override.hex;
      colorSource = "override";
    }
    if (!brandHex) {
      const art = variants.color ?? variants.icon ?? variants.wordmark ?? variants.mono;
      const occurrences = art?.colors.occurrences ?? [];
      brandHex = dominantColor(occurrences.length ? occurrences : ["000000"]);
      colorSource = "artwork";
      colorFromArtwork++;
    }
    const colors = brandHex ? deriveBrandColors(brandHex, colorSource) : null;
    if (
      artworkOverrides[draft.slug]?.color === "recolor-mono" &&
      monoRaw &&
      stored.mono &&
      colors
    ) {
      // the mono mark in the brand colour (Netflix's N without the logos icon's black square)
      raw.color = {
        svg: recolor(monoRaw, colors.brandColor),
        source: `recolored:${stored.mono.source}`,
      };
      stored.color = storedSvg(raw.color.svg, "color", draft.slug, raw.color.source);
      raw.icon = raw.color;
      stored.icon = storedSvg(raw.icon.svg, "icon", draft.slug, raw.icon.source);
    }
    ruleInputs.push({ slug: draft.slug, brandColor: colors?.brandColor ?? null, raw });
    brands.push({
      id: ids[draft.slug] as number,
      slug: draft.slug,
      name: draft.name,
      brandColor: colors?.brandColor ?? null,
      darkModeColor: colors?.darkModeColor ?? null,
      contrastTextColor: colors?.contrastTextColor ?? null,
      colors: colors?.colors ?? [],
      aliases: draft.aliases,
      domains: [],
      sourceUrl: draft.sourceUrl,
      guidelinesUrl: draft.guidelinesUrl,
      sources: [...draft.sources],
      variants: stored,
      verifiedAt: null,
    });
  }
  // the variant rules (scripts/catalog/variant-rules.ts): color, dark and light of every brand
  const rules = await applyVariantRules(ruleInputs, {
    file: PAINT_CACHE_FILE,
    version: sha256(
      ["scripts/catalog/paint.ts", "scripts/catalog/modes.ts"]
        .map((f) => readFileSync(join(ROOT, f), "utf8"))
        .join("\n") + packageVersion(ROOT, "@resvg/resvg-js"),
    ).slice(0, 12),
  });
  writeAtomic(PAINT_CACHE_FILE, rules.cache);
  for (const b of brands) {
    const r = rules.results.get(b.slug);
    for (const variant of ["color", "dark", "light"] as const) {
      const art = r?.[variant];
      if (art) b.variants[variant] = storedSvg(art.svg, variant, b.slug, art.source);
    }
    if (b.variants.color) {
      toCheck.push({ slug: b.slug, color: b.variants.color, brandHex: b.brandColor });
    }
  }
  phase(
    "rules",
    `${rules.report.measured} SVGs measured on pixels (${rules.report.rendered} rendered), ` +
      `${rules.report.fallbacks.length} fallbacks, ${rules.report.foreign} derived variants with a foreign hue`,
  );
  brands.sort((a, b) => a.id - b.id);
  // the render check of every colour variant, cached by sha256 (scripts/catalog/render-check.ts)
  const renderKey = (c: (typeof toCheck)[number]) =>
    `${RENDER_CHECK_VERSION}:${c.color.sha256}:${c.brandHex}`;
  const misses = toCheck.filter((c) => !renderCache[renderKey(c)]);
  const fresh = await renderFlagsAll(
    misses.map((c) => ({ svg: c.color.svg, brandHex: c.brandHex })),
  );
  misses.forEach((c, i) => {
    renderCache[renderKey(c)] = fresh[i] ?? [];
  });
  for (const c of toCheck) {
    const flags = renderCache[renderKey(c)] ?? [];
    nextRenderCache[renderKey(c)] = flags;
    for (const flag of flags) renderReport.push(`${c.slug}: ${flag} (${c.color.source})`);
  }
  writeAtomic(RENDER_CACHE_FILE, JSON.stringify(nextRenderCache));
  phase(
    "colors",
    `${brands.length} brands, ${colorFromArtwork} brand colours taken from artwork; ` +
      `mono marks derived for ${monoReport.fromIcon + monoReport.fromColor + monoReport.forced}, skipped for ${monoReport.skipped.size}`,
  );

  const overrides: Record<string, string[]> = JSON.parse(readFileSync(OVERRIDES_FILE, "utf8"));
  // fixtures/legacy-domains.json: main, legacy and corporate domains, one comment each
  const legacy: Record<string, Record<string, string>> = JSON.parse(
    readFileSync(LEGACY_DOMAINS_FILE, "utf8"),
  );
  for (const [slug, entries] of Object.entries(legacy)) {
    if (slug === "$comment") continue;
    overrides[slug] = [...new Set([...(overrides[slug] ?? []), ...Object.keys(entries)])];
  }
  const draftBySlug = new Map(drafts.map((d) => [d.slug, d]));
  const { domains, report } = assignDomains(
    brands.map((b) => {
      const d = draftBySlug.get(b.slug);
      return {
        id: b.id,
        slug: b.slug,
        keys: d?.keys ?? new Set([b.slug]),
        fromSimpleIcons: b.sources.includes("simple-icons"),
        sourceUrl: b.sourceUrl,
        otherUrls: [b.guidelinesUrl, ...(d?.extraUrls ?? [])].filter((u): u is string => !!u),
      };
    }),
    overrides,
  );
  for (const b of brands) b.domains = domains.get(b.slug) ?? [];
  phase(
    "domains",
    `${report.domains} domains on ${report.brandsWithDomain} brands, ${report.contested.length} contested`,
  );

  // the brand directory (scripts/catalog/nsi.ts): name-suggestion-index companies, no artwork
  const { buildDirectory } = await import("./catalog/nsi");
  const directory = buildDirectory(
    ROOT,
    brands,
    JSON.parse(readFileSync(DIRECTORY_PARENTS_FILE, "utf8")),
  );
  const withDirectory = assignIds(
    ids,
    directory.entries.map((e) => e.slug),
  );
  if (withDirectory.added.length) writeAtomic(IDS_FILE, formatIds(withDirectory.ids));
  for (const e of directory.entries) brands.push({ id: withDirectory.ids[e.slug] as number, ...e });
  // legacy/corporate domains of directory entries (the fixture's slugs not among the icon-set
  // brands above), added where no other brand holds the domain
  const held = new Set(brands.flatMap((b) => b.domains));
  for (const e of directory.entries) {
    for (const domain of Object.keys(legacy[e.slug] ?? {})) {
      if (held.has(domain)) continue;
      e.domains.push(domain);
      held.add(domain);
    }
  }
  phase(
    "directory",
    `${directory.candidates} name-suggestion-index companies: ${directory.merged} merged into catalog brands, ${directory.entries.length} directory entries (${withDirectory.added.length} new ids)`,
  );

  const { attributionMarkdown } = await import("./catalog/attribution");
  const attribution = attributionMarkdown(ROOT, brands);
  const previous = existsSync(ATTRIBUTION_FILE) ? readFileSync(ATTRIBUTION_FILE, "utf8") : "";
  if (previous !== attribution) writeAtomic(ATTRIBUTION_FILE, attribution);

  const version = inputsVersion(ROOT);
  writeAtomic(CATALOG_FILE, JSON.stringify({ version, builtAt: new Date().toISOString(), brands }));

  const count = (v: string) =>
    brands.filter((b) => b.variants[v as keyof Brand["variants"]]).length;
  const byReason = new Map<string, number>();
  for (const why of monoReport.skipped.values()) {
    const reason = why.startsWith("override:") ? "override" : why;
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
  const byRule = new Map<string, number>();
  for (const c of report.contested) byRule.set(c.rule, (byRule.get(c.rule) ?? 0) + 1);
  const lines = [
    `brands: ${brands.length} (${brands.filter((b) => Object.keys(b.variants).length).length} with artwork, ${directory.entries.length} directory entries without artwork)`,
    `name-suggestion-index: ${directory.candidates} companies, ${directory.merged} merged into catalog brands, ${directory.entries.length} directory entries`,
    `sources: ${Object.entries(stats)
      .filter(([k]) => k.endsWith("NewBrands"))
      .map(([k, n]) => `${k.replace("NewBrands", "")} +${n} new`)
      .join(", ")}`,
    `render check of colour variants (32 px): ${toCheck.length} rendered (${misses.length} not cached), ${renderReport.length} flags (listed below)`,
    `variant rules: ${rules.report.madeColor} colour marks made from the mono mark in the brand colour, ${rules.report.iconColor} replaced by the icon (another design); ` +
      (["dark", "light"] as const)
        .map(
          (m) =>
            `${m}: ${Object.entries(rules.report.rules[m])
              .map(([rule, n]) => `${n} ${rule}`)
              .join(", ")}`,
        )
        .join("; "),
    `fidelity check: ${rules.report.checked} derived variants compared with the brand's own hues on pixels, ${rules.report.foreign} with a foreign hue; ${rules.report.fallbacks.length} fallbacks (listed below)`,
    `variants: ${VARIANTS.map((v) => `${v} ${count(v)}`).join(", ")}`,
    `derived mono marks: ${monoReport.fromIcon} from the icon, ${monoReport.fromColor} from the colour artwork, ${monoReport.forced} by override`,
    `brands without a mono mark (derivation skipped): ${monoReport.skipped.size}`,
    ...[...byReason].sort((a, b) => b[1] - a[1]).map(([why, n]) => `  ${n} ${why}`),
    `brands with a brandColor: ${brands.filter((b) => b.brandColor).length}`,
    `brands with a domain: ${report.brandsWithDomain} (${report.domains} domains)`,
    `domains claimed by more than one brand: ${report.contested.length}`,
    ...[...byRule].map(([rule, n]) => `  ${n} settled by: ${rule}`),
    ...(report.unknownOverrideSlugs.length
      ? [`override slugs not in the catalog: ${report.unknownOverrideSlugs.join(", ")}`]
      : []),
  ];
  const clashLines = report.contested.map(
    (c) =>
      `${c.domain} -> ${c.winner ?? "(nobody)"} [${c.rule}] claimed by ${c.claimants.join(", ")}`,
  );
  const monoLines = [...monoReport.skipped].map(([slug, why]) => `${slug}: ${why}`);
  writeAtomic(
    REPORT_FILE,
    `${lines.join("\n")}\n\ncontested domains:\n${clashLines.join("\n")}\n\n` +
      `mono marks not derived:\n${monoLines.join("\n")}\n\n` +
      `variant rule fallbacks (slug: variant: why):\n${rules.report.fallbacks.join("\n")}\n\n` +
      `render check flags (colour variant):\n${renderReport.join("\n")}\n\n` +
      `merge decisions (set base -> brand):\n${decisions.join("\n")}\n\n` +
      `directory (name-suggestion-index) decisions and clashes:\n${directory.report.join("\n")}\n`,
  );
  for (const line of [...lines, "contested domains (domain -> winner [rule] claimants):"]) {
    console.error(`[catalog] ${line}`);
  }
  for (const line of clashLines) console.error(`[catalog]   ${line}`);
  console.error(
    `[catalog] every contested domain and its rule, every skipped mono: ${REPORT_FILE}`,
  );
  phase("write", `${CATALOG_FILE} version ${version}`);
}

if (process.argv.includes("--if-stale")) {
  const current = builtVersion(CATALOG_FILE);
  if (current && current === inputsVersion(ROOT)) {
    console.error(
      `[catalog] up to date (${current}), ${Math.round(performance.now() - started)} ms`,
    );
    process.exit(0);
  }
}
await build();
