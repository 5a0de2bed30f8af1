/**
 * Build step 1, load sources: the curated fixtures (fixtures/*.json) every later step reads.
 * The data packages themselves are read by the merge step (scripts/catalog/icon-sets.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AliasOverrides } from "../aliases";
import type { DomainOverrides } from "../domains";
import type { DirectoryJoins } from "../same-company";

export interface Fixtures {
  /** name-overrides.json: display names in brand casing, by slug */
  names: Record<string, string>;
  /** alias-overrides.json */
  aliases: AliasOverrides;
  /** artwork-overrides.json: colour artwork decided by looking at the render check */
  artwork: Record<string, { color: string; why: string }>;
  /** mono-overrides.json: derive a mono mark anyway, or skip it */
  mono: { derive: Record<string, string>; skip: Record<string, string> };
  /** color-overrides.json: brand colours */
  colors: Record<string, { hex: string; why: string }>;
  /** domain-overrides.json */
  domains: DomainOverrides;
  /** legacy-domains.json: main, legacy and corporate domains, one comment each */
  legacy: Record<string, Record<string, string>>;
  /** directory-parents.json */
  directoryParents: Record<string, { wikidata: string | null }>;
  /** directory-joins.json: directory entries that are (or are not) the icon-set brand of their name */
  directoryJoins: DirectoryJoins;
}

const FILES: Record<keyof Fixtures, string> = {
  names: "name-overrides.json",
  aliases: "alias-overrides.json",
  artwork: "artwork-overrides.json",
  mono: "mono-overrides.json",
  colors: "color-overrides.json",
  domains: "domain-overrides.json",
  legacy: "legacy-domains.json",
  directoryParents: "directory-parents.json",
  directoryJoins: "directory-joins.json",
};

export function loadFixtures(root: string): Fixtures {
  const read = (file: string) => JSON.parse(readFileSync(join(root, "fixtures", file), "utf8"));
  return Object.fromEntries(
    Object.entries(FILES).map(([key, file]) => [key, read(file)]),
  ) as unknown as Fixtures;
}
