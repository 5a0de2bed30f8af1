/**
 * The card-statement descriptor list (transactions.txt) and how a lookup's answer is judged
 * against it: the right brand is the one the expected domains resolve to through the domain
 * lookup; a descriptor whose domains resolve to no brand names a brand the catalog lacks.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { normalizeHost } from "../../../src/catalog/brand/domain";
import type { BrandResolver } from "../../../src/catalog/brand/service";

export interface DescriptorEntry {
  descriptor: string;
  country?: string;
  mcc?: string;
  /** the brand's domains; null: must not match */
  expected: string[] | null;
  /** every fourth entry of the first part: the rules were written without looking at these */
  heldOut: boolean;
  /** 1: written before the matcher; 2: written after its rules, measured once before any change */
  part: 1 | 2;
  section: string;
}

/** Lines "<descriptor>\t<country|->\t<mcc|->\t<domain|domain...|->"; # comments name sections. */
export function readDescriptorList(file = "transactions.txt"): DescriptorEntry[] {
  const out: DescriptorEntry[] = [];
  let section = "";
  let part: 1 | 2 = 1;
  for (const line of readFileSync(join(import.meta.dir, file), "utf8").split("\n")) {
    const heading = /^# (.+)$/.exec(line);
    if (heading && !line.includes("\t")) section = heading[1] as string;
    if (line.startsWith("# Written after the rules")) part = 2;
    if (!line.trim() || line.startsWith("#")) continue;
    const [descriptor, country, mcc, expected, ...more] = line.split("\t");
    if (!descriptor || !country || !mcc || !expected || more.length)
      throw new Error(`${file}: bad line ${JSON.stringify(line)}`);
    out.push({
      descriptor,
      ...(country !== "-" ? { country } : {}),
      ...(mcc !== "-" ? { mcc } : {}),
      expected: expected === "-" ? null : expected.split("|"),
      heldOut: part === 1 && out.length % 4 === 3,
      part,
      section,
    });
  }
  return out;
}

/**
 * The ids of the brands an entry's expected domains resolve to, or its `slug:` entries name
 * (empty: not in the catalog).
 */
export function expectedIds(
  e: DescriptorEntry,
  resolver: BrandResolver,
  bySlug: (slug: string) => { id: number } | undefined,
): Set<number> {
  const ids = new Set<number>();
  for (const d of e.expected ?? []) {
    if (d.startsWith("slug:")) {
      const b = bySlug(d.slice(5));
      if (b) ids.add(b.id);
      continue;
    }
    const h = normalizeHost(d);
    const b = h.ok ? resolver.resolveHost(h.host) : null;
    if (b) ids.add(b.id);
  }
  return ids;
}

export interface Figures {
  /** entries whose brand is in the catalog */
  inCatalog: number;
  right: number;
  /** answered another brand: of the entries in the catalog, and of those whose brand it lacks */
  wrong: number;
  /** positive entries: in the catalog or not (the denominator of the wrong-brand rate) */
  positives: number;
  /** entries whose brand the catalog lacks that matched some brand (counted in `wrong`) */
  lackingMatched: number;
  lacking: number;
  negatives: number;
  negativesMatched: number;
  /** lines: "descriptor -> slug (expected ...)" */
  wrongs: string[];
  misses: string[];
  falseMatches: string[];
}

/** Judge the answers (brand id or null, in list order) of a list. */
export function judge(
  entries: DescriptorEntry[],
  answers: ({ id: number; slug: string } | null)[],
  resolver: BrandResolver,
  bySlug: (slug: string) => { id: number } | undefined,
): Figures {
  const f: Figures = {
    inCatalog: 0,
    right: 0,
    wrong: 0,
    positives: 0,
    lackingMatched: 0,
    lacking: 0,
    negatives: 0,
    negativesMatched: 0,
    wrongs: [],
    misses: [],
    falseMatches: [],
  };
  entries.forEach((e, i) => {
    const got = answers[i] ?? null;
    if (e.expected === null) {
      f.negatives++;
      if (got) {
        f.negativesMatched++;
        f.falseMatches.push(`${e.descriptor} -> ${got.slug}`);
      }
      return;
    }
    f.positives++;
    const ids = expectedIds(e, resolver, bySlug);
    if (!ids.size) {
      f.lacking++;
      if (got) {
        f.lackingMatched++;
        f.wrong++;
        f.wrongs.push(`${e.descriptor} -> ${got.slug} (the catalog lacks ${e.expected.join("|")})`);
      }
      return;
    }
    f.inCatalog++;
    if (got && ids.has(got.id)) f.right++;
    else if (got) {
      f.wrong++;
      f.wrongs.push(`${e.descriptor} -> ${got.slug} (expected ${e.expected.join("|")})`);
    } else f.misses.push(`${e.descriptor} (${e.expected.join("|")})`);
  });
  return f;
}

export const pct = (n: number, d: number) => `${d ? ((100 * n) / d).toFixed(1) : "-"}%`;
