/**
 * Build step 6, write: docs/attribution.md (only when it changed), the catalog file stamped
 * with the inputs' version and the catalog database beside it (catalog.sqlite), and the build report (build/catalog-report.txt) whose summary
 * also goes to stderr.
 */
import { existsSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { type Brand, VARIANTS } from "../../../src/catalog/built-catalog";
import { databaseBeside } from "../../../src/catalog/store/embedded";
import { writeCatalogFileSync } from "../../../src/catalog/store/schema";
import { attributionMarkdown } from "../attribution";
import { inputsVersion } from "../inputs";
import { web3Summary } from "../web3icons-merge";
import { type BuildPaths, writeAtomic } from "./context";
import type { Enriched } from "./enrich";
import type { Merged } from "./merge";
import type { VariantsResult } from "./variants";

export interface BuildOutcome {
  merged: Pick<Merged, "stats" | "decisions" | "web3"> & {
    thesvgExcluded?: Record<string, number>;
    folded?: Record<string, number>;
  };
  variants: Omit<VariantsResult, "brands">;
  enriched: Enriched;
  /** artwork of any source left out because it draws nothing: "slug variant source: reason" */
  undrawn?: string[];
  /** retired slugs (scripts/catalog/redirects.ts): redirected (old -> new) and left without */
  retired?: { pairs: [string, string][]; unredirected: string[] };
}

/** The report: a summary, then every contested domain, skipped mono, fallback, flag, decision. */
export function buildReport(
  brands: Brand[],
  { merged, variants, enriched, undrawn = [], retired }: BuildOutcome,
): { summary: string[]; clashes: string[]; text: string } {
  const { monoReport, rules } = variants;
  const { domains: report, directory } = enriched;
  const count = (v: string) =>
    brands.filter((b) => b.variants[v as keyof Brand["variants"]]).length;
  const withArtwork = brands.filter((b) => Object.keys(b.variants).length).length;
  const byReason = new Map<string, number>();
  for (const why of monoReport.skipped.values()) {
    const reason = why.startsWith("override:") ? "override" : why;
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
  const byRule = new Map<string, number>();
  for (const c of report.contested) byRule.set(c.rule, (byRule.get(c.rule) ?? 0) + 1);
  const summary = [
    `brands: ${brands.length} (${withArtwork} with artwork, ${brands.length - withArtwork} directory entries without artwork)`,
    `name-suggestion-index: ${directory.candidates} companies, ${directory.merged} merged into catalog brands, ${directory.entries.length} directory entries`,
    `sources: ${Object.entries(merged.stats)
      .filter(([k]) => k.endsWith("NewBrands"))
      .map(([k, n]) => `${k.replace("NewBrands", "")} +${n} new`)
      .join(", ")}`,
    ...(merged.stats.thesvgIcons
      ? [
          `@thesvg/icons: ${merged.stats.thesvgIcons} icons, ${merged.stats.thesvgKept} kept; left out: ${Object.entries(
            merged.thesvgExcluded ?? {},
          )
            .sort((a, b) => b[1] - a[1])
            .map(([why, n]) => `${n} ${why}`)
            .join(", ")}`,
          `@thesvg/icons merge: ${merged.stats.thesvgByDomain} by domain, ${merged.stats.thesvgByName} by name, ${merged.stats.thesvgByDrawingOrCurated ?? 0} by a lobehub drawing or a curated domain, ${merged.stats.thesvgNewBrands} new brands, ${merged.stats.thesvgClashes} namesakes or taken slugs and ${merged.stats.thesvgDuplicates} second icons of a brand left out`,
        ]
      : []),
    `one brand, one entry: icon names folded into the brand they draw: ${
      Object.entries(merged.folded ?? {})
        .map(([kind, n]) => `${n} ${kind}s`)
        .join(", ") || "none"
    } ("folded into" in the merge decisions); ${directory.joined.length} directory companies joined into the icon-set brand they are (${directory.joined.filter((j) => j.why.startsWith("curated")).length} of them curated; "joined into" in the directory decisions); thesvg icons joined ${merged.stats.thesvgByDrawingOrCurated ?? 0} brands by a lobehub drawing or a curated domain; ${retired?.pairs.length ?? 0} retired slugs answer as the brand they became (listed below), ${retired?.unredirected.length ?? 0} retired without a redirect`,
    `artwork that draws nothing (zero-size viewBox, no shape), left out: ${undrawn.length}${undrawn.length ? ` (${undrawn.join("; ")})` : ""}`,
    ...(merged.web3 ? web3Summary(merged.web3) : []),
    `render check of colour variants (32 px): ${variants.checked} rendered (${variants.misses} not cached), ${variants.renderFlags.length} flags (listed below)`,
    `variant rules: ${rules.madeColor} colour marks made from the mono mark in the brand colour, ${rules.iconColor} replaced by the icon (another design), ${rules.nearWhite} near-white colour marks made plain black (the mark is the dark variant); ` +
      (["dark", "light"] as const)
        .map(
          (m) =>
            `${m}: ${Object.entries(rules.rules[m])
              .map(([rule, n]) => `${n} ${rule}`)
              .join(", ")}`,
        )
        .join("; "),
    `fidelity check: ${rules.checked} derived variants compared with the brand's own hues on pixels, ${rules.foreign} with a foreign hue; ${rules.fallbacks.length} fallbacks (listed below)`,
    `variants: ${VARIANTS.map((v) => `${v} ${count(v)}`).join(", ")}`,
    `derived mono marks: ${monoReport.fromIcon} from the icon, ${monoReport.fromColor} from the colour artwork, ${monoReport.fromDarkSurface} from a colour mark made for dark surfaces (white as ink), ${monoReport.fromWordmark} from the wordmark (no other artwork), ${monoReport.forced} by override`,
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
  const clashes = report.contested.map(
    (c) =>
      `${c.domain} -> ${c.winner ?? "(nobody)"} [${c.rule}] claimed by ${c.claimants.join(", ")}`,
  );
  const monoLines = [...monoReport.skipped].map(([slug, why]) => `${slug}: ${why}`);
  const text =
    `${summary.join("\n")}\n\ncontested domains:\n${clashes.join("\n")}\n\n` +
    `mono marks not derived:\n${monoLines.join("\n")}\n\n` +
    `variant rule fallbacks (slug: variant: why):\n${rules.fallbacks.join("\n")}\n\n` +
    `render check flags (colour variant):\n${variants.renderFlags.join("\n")}\n\n` +
    `merge decisions (set base -> brand):\n${merged.decisions.join("\n")}\n\n` +
    `retired slugs (fixtures/slug-redirects.json: old slug -> the brand it answers as):\n${(retired?.pairs ?? []).map(([from, to]) => `${from} -> ${to}`).join("\n")}\n` +
    `retired without a redirect: ${(retired?.unredirected ?? []).join(" ")}\n\n` +
    `directory (name-suggestion-index) decisions and clashes:\n${directory.report.join("\n")}\n\n` +
    `listed companies (pytickersymbols) -> brand:\n${enriched.tickers.report.join("\n")}\n`;
  return { summary, clashes, text };
}

/** Writes attribution, catalog and report; returns the catalog's version. */
export function writeCatalog(paths: BuildPaths, brands: Brand[], outcome: BuildOutcome): string {
  const attribution = attributionMarkdown(paths.root, brands);
  const previous = existsSync(paths.attributionFile)
    ? readFileSync(paths.attributionFile, "utf8")
    : "";
  if (previous !== attribution) writeAtomic(paths.attributionFile, attribution);

  const version = inputsVersion(paths.root);
  const builtAt = new Date().toISOString();
  // the catalog database the service serves (src/catalog/store/), beside the JSON and written
  // first: a running service that sees the JSON's new version finds its database in place
  writeCatalogFileSync(
    databaseBeside(paths.catalogFile),
    { version, builtAt },
    [...brands].sort((a, b) => a.id - b.id),
    (f) => new DatabaseSync(f),
  );
  writeAtomic(paths.catalogFile, JSON.stringify({ version, builtAt, brands }));

  const { summary, clashes, text } = buildReport(brands, outcome);
  writeAtomic(paths.reportFile, text);
  for (const line of [...summary, "contested domains (domain -> winner [rule] claimants):"]) {
    console.error(`[catalog] ${line}`);
  }
  for (const line of clashes) console.error(`[catalog]   ${line}`);
  console.error(
    `[catalog] every contested domain and its rule, every skipped mono: ${paths.reportFile}`,
  );
  return version;
}
