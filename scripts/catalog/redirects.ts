/**
 * Retired slugs: a slug once issued (fixtures/brand-ids.json is append-only) that no brand has
 * any more, because two entries were merged into one. A redirect in fixtures/slug-redirects.json
 * keeps it working: the target brand lists it in `formerSlugs`, and the catalog answers it with
 * that brand. The rest are counted in the build report.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Brand } from "../../src/catalog/types";

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
