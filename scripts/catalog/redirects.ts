/**
 * Retired slugs: a slug once issued (fixtures/brand-ids.json is append-only) that no brand has
 * any more, because two entries were merged into one. A redirect in fixtures/slug-redirects.json
 * keeps it working: the target brand lists it in `formerSlugs`, and the catalog answers it with
 * that brand. The rest are counted in the build report.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { Brand } from "../../src/catalog/built-catalog";

export function loadRedirects(root: string): Record<string, string> {
  const file = join(root, "fixtures/slug-redirects.json");
  if (!existsSync(file)) return {};
  const { $comment: _, ...redirects } = JSON.parse(readFileSync(file, "utf8"));
  return redirects as Record<string, string>;
}

/**
 * Sets `formerSlugs` on the brands redirects point to. Throws on a redirect from a slug a brand
 * still has or to a slug no brand has (a stale fixture). Returns the redirected slugs (old ->
 * new) and the retired slugs left without one.
 */
export function applyRedirects(
  brands: Brand[],
  issued: Record<string, number>,
  redirects: Record<string, string>,
): { redirected: number; unredirected: string[]; pairs: [string, string][] } {
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  for (const [from, to] of Object.entries(redirects)) {
    if (bySlug.has(from)) throw new Error(`slug-redirects: ${from} is still a brand's slug`);
    if (!bySlug.has(to)) throw new Error(`slug-redirects: ${from} -> ${to}, which no brand has`);
  }
  let redirected = 0;
  const unredirected: string[] = [];
  const pairs: [string, string][] = [];
  for (const slug of Object.keys(issued).sort()) {
    if (bySlug.has(slug)) continue;
    const target = bySlug.get(redirects[slug] ?? "");
    if (!target) {
      unredirected.push(slug);
      continue;
    }
    target.formerSlugs = [...(target.formerSlugs ?? []), slug];
    pairs.push([slug, target.slug]);
    redirected++;
  }
  return { redirected, unredirected, pairs };
}

/** A pin as the embedded store keeps it (the fields the build reads). */
export interface StoredPin {
  brandId: number;
  slug: string;
  field: string;
}

/**
 * The pins of the embedded store in `dataDir` (the service's DATA_DIR), read-only; none when
 * there is no store there. A service on MongoDB reports its pins when it loads the build.
 */
export function storedPins(dataDir: string): StoredPin[] {
  const file = join(dataDir, "brand-api.sqlite");
  if (!existsSync(file)) return [];
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'pins'").get();
    if (!has) return [];
    const rows = db.prepare("SELECT record FROM pins").all() as { record: string }[];
    return rows.map((r) => JSON.parse(r.record) as StoredPin);
  } finally {
    db.close();
  }
}

/**
 * What happens to pins on brands this build retires, one line each: the service that loads
 * the build moves such a pin to the brand the retired slug redirects to, or (no redirect, or
 * that brand has its own pin on the field) reports it in /admin/reports and the audit trail.
 */
export function retiredPins(
  pins: StoredPin[],
  brands: Brand[],
  issued: Record<string, number>,
  redirects: Record<string, string>,
) {
  const live = new Set(brands.map((b) => b.id));
  const built = new Set(Object.values(issued));
  const bySlug = new Map(brands.map((b) => [b.slug, b]));
  const pinned = new Set(pins.map((p) => `${p.brandId}:${p.field}`));
  const lines: string[] = [];
  for (const p of pins) {
    // a brand discovery made is not the build's to retire
    if (live.has(p.brandId) || !built.has(p.brandId)) continue;
    const to = bySlug.get(redirects[p.slug] ?? "");
    if (!to) lines.push(`${p.slug} ${p.field}: retired without a redirect, will be reported`);
    else if (pinned.has(`${to.id}:${p.field}`))
      lines.push(`${p.slug} ${p.field}: ${to.slug} has its own pin on it, will be reported`);
    else lines.push(`${p.slug} ${p.field}: moves to ${to.slug}`);
  }
  return lines;
}
