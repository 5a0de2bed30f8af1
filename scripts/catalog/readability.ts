/**
 * The build's readability check: every dark and light variant the variant rules had to keep
 * below the floor (less than MIN_VISIBLE_SHARE of the mark's paint reaching 3:1 on its
 * surface, measured on rendered pixels; scripts/catalog/variant-rules.ts) is counted, and
 * the build fails when there are more than fixtures/readability.json allows, listing the ten
 * weakest. Shares are printed rounded down, never up.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RulesReport } from "./variant-rules";

export interface ReadabilityResult {
  count: number;
  limit: number;
  /** the ten weakest, weakest first: "slug dark: 12.3% of the mark reaches 3:1" */
  weakest: string[];
}

/** 0.12345 -> "12.3" (rounded down) */
const percentDown = (share: number) => (Math.floor(share * 1000) / 10).toFixed(1);

export function readability(
  report: Pick<RulesReport, "belowFloor">,
  limit: number,
): ReadabilityResult {
  const weakest = [...report.belowFloor]
    .sort((a, b) => a.share - b.share || a.slug.localeCompare(b.slug))
    .slice(0, 10)
    .map((w) => `${w.slug} ${w.variant}: ${percentDown(w.share)}% of the mark reaches 3:1`);
  return { count: report.belowFloor.length, limit, weakest };
}

/** fixtures/readability.json: how many variants below the floor the build accepts. */
export function readabilityLimit(root: string): number {
  return JSON.parse(readFileSync(join(root, "fixtures", "readability.json"), "utf8")).belowFloor;
}
