import type { ResolvedIcon } from "./iconify";
import type { SetId } from "./sources";
import type { TheSvgIcon } from "./thesvg";
import type { Web3Icon } from "./web3icons";

/** The shapes a brand has while the catalog is merged from its sources (icon-sets.ts and the merges it calls). */

export interface IconCandidate {
  set: SetId;
  icon: ResolvedIcon;
  /** modifiers parsed off the name: icon, wordmark, dark, light, mono, alt, 2020 ... */
  mods: Set<string>;
  /** true when the name is an alias of the set */
  alias: boolean;
  /** the base names the brand itself (not an "aka" alias or a synonym, like "twitter" for X) */
  direct: boolean;
}

export interface DraftBrand {
  key: string;
  slug: string;
  name: string;
  aliases: string[];
  hex: string | null;
  sourceUrl: string | null;
  guidelinesUrl: string | null;
  /** further official URLs (sources of simple-icons "dup" entries) */
  extraUrls: string[];
  /** compact keys naming this brand (slug, title, aliases) */
  keys: Set<string>;
  /** compact keys of the brand's own slug and title */
  primaryKeys: Set<string>;
  sources: Set<string>;
  /** simple-icons SVG as shipped */
  siSvg: string | null;
  candidates: IconCandidate[];
  /** base name first seen in an iconify set (iconify-only brands) */
  iconifyBase?: string;
  /** the @thesvg/icons icon merged into this brand (scripts/catalog/thesvg-merge.ts) */
  thesvg?: TheSvgIcon;
  /** the @web3icons/core project merged into this brand (scripts/catalog/web3icons-merge.ts) */
  web3?: Web3Brand;
}

/** One @web3icons/core project: its icons under one name. */
export interface Web3Brand {
  name: string;
  icons: Web3Icon[];
}
