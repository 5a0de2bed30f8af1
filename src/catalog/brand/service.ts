/**
 * Brand by domain or business e-mail (plain TS). Each domain in the catalog names one brand
 * (the catalog build settles clashes); a host resolves to the brand of the most specific
 * domain on its chain (see lookupChain).
 */
import type { Static } from "elysia";
import { frozenCache } from "../frozen";
import { directoryFields } from "../model";
import { contrastOf, cssVars, NOTICE } from "../service";
import { type Brand, VARIANTS } from "../types";
import {
  countryOf,
  isCountrySuffix,
  lookupChain,
  normalizeHost,
  registrableDomain,
} from "./domain";
import type { BrandResponse } from "./model";

export interface BrandCatalog {
  all(): readonly Brand[];
  brand(slug: string): Brand | undefined;
  onChange(listener: (updated?: Brand) => void): void;
}

/** A brand as GET /v1/brand answers it (the BrandResponse schema). */
export type BrandView = Static<typeof BrandResponse>;

/** The BrandResponse of a brand: variants in the fixed order mono, color, dark, light, wordmark, icon. */
export function toBrandView(b: Brand): BrandView {
  return {
    id: b.id,
    slug: b.slug,
    name: b.name,
    brandColor: b.brandColor,
    darkModeColor: b.darkModeColor,
    verified: b.verifiedAt !== null,
    verifiedAt: b.verifiedAt,
    variants: VARIANTS.filter((v) => b.variants[v] !== undefined),
    contrastTextColor: contrastOf(b),
    _css: cssVars(b),
    _notice: NOTICE,
    ...directoryFields(b),
  };
}

/** A catalog domain as stored, in the same form normalizeHost gives for user input. */
function domainKey(domain: string): string | null {
  const h = normalizeHost(domain);
  return h.ok ? h.host : null;
}

/** The label of a registrable domain and its public suffix ("amazon.co.jp" -> amazon, co.jp). */
function splitRegistrable(domain: string): [string, string] {
  const dot = domain.indexOf(".");
  return [domain.slice(0, dot), domain.slice(dot + 1)];
}

/** The domain maps of a list of brands. */
interface HostMaps {
  byHost: Map<string, string>;
  /** registrable label -> slug, for labels whose registrable domains all name one brand */
  byLabel: Map<string, string>;
  signatures: Map<number, string>;
}

function hostMaps(brands: readonly Brand[]): HostMaps {
  const byHost = new Map<string, string>();
  const signatures = new Map<number, string>();
  for (const b of brands) {
    signatures.set(b.id, b.domains.join(" "));
    for (const d of b.domains) {
      const key = domainKey(d);
      // first claim wins (the build already gives each domain to one brand)
      if (key && !byHost.has(key)) byHost.set(key, b.slug);
    }
  }
  // label -> the one brand whose registrable domains use it (null: several) and the countries
  // of those domains that are national sites (null: one is not)
  const labels = new Map<string, { slug: string | null; countries: Set<string> | null }>();
  for (const [host, slug] of byHost) {
    if (registrableDomain(host) !== host) continue;
    const [label, suffix] = splitRegistrable(host);
    if (!label) continue;
    const known = labels.get(label) ?? { slug, countries: new Set<string>() };
    const country = countryOf(suffix);
    if (known.slug !== slug) known.slug = null;
    else if (country === null) known.countries = null;
    else known.countries?.add(country);
    labels.set(label, known);
  }
  // one country's site (otto.fi) speaks for that country alone: another country's namesake
  // (otto.de) is not found through it; a brand under .com or two countries' suffixes is
  // international
  const byLabel = new Map<string, string>();
  for (const [label, { slug, countries }] of labels)
    if (slug !== null && (countries === null || countries.size > 1)) byLabel.set(label, slug);
  return { byHost, byLabel, signatures };
}

/** shared between resolvers over the same frozen brands (frozen.ts) */
const frozenMaps = frozenCache<HostMaps>();

export class BrandResolver {
  private maps: HostMaps = hostMaps([]);
  /** the maps are shared with other resolvers (frozen.ts): copied before a change */
  private shared = false;
  /** hosts an operator pinned to a brand (src/reports/pins.ts): they beat the catalog's maps */
  private pinnedHost: (host: string) => string | undefined = () => undefined;

  constructor(private catalog: BrandCatalog) {
    this.rebuild();
    catalog.onChange((updated) => {
      if (updated && !this.maps.signatures.has(updated.id)) this.addBrand(updated);
      else if (!updated || this.maps.signatures.get(updated.id) !== updated.domains.join(" "))
        this.rebuild();
    });
  }

  /** Answer `pinned(host)`'s slug before the catalog's own domain maps. */
  usePinnedHosts(pinned: (host: string) => string | undefined) {
    this.pinnedHost = pinned;
  }

  /** Number of hosts that name a brand. */
  get size() {
    return this.maps.byHost.size;
  }

  rebuild() {
    const { value: maps, shared } = frozenMaps.get(this.catalog.all(), hostMaps);
    this.maps = maps;
    this.shared = shared;
  }

  /** A brand new to the catalog (a discovered brand): its unclaimed domains only. */
  private addBrand(b: Brand) {
    if (this.shared) {
      const { byHost, byLabel, signatures } = this.maps;
      this.maps = {
        byHost: new Map(byHost),
        byLabel: new Map(byLabel),
        signatures: new Map(signatures),
      };
      this.shared = false;
    }
    const { byHost, byLabel, signatures } = this.maps;
    signatures.set(b.id, b.domains.join(" "));
    for (const d of b.domains) {
      const key = domainKey(d);
      if (!key || byHost.has(key)) continue;
      byHost.set(key, b.slug);
      if (registrableDomain(key) !== key) continue;
      const [label, suffix] = splitRegistrable(key);
      if (label && !isCountrySuffix(suffix) && !byLabel.has(label)) byLabel.set(label, b.slug);
    }
  }

  /**
   * The brand of a normalized host: the exact host first, then its parents; failing those, a
   * domain under a country-code public suffix resolves to the brand that owns the same label under
   * .com (google.co.uk -> google.com's brand), else to the one brand whose registrable domains
   * use that label when that brand is international: a domain under a generic suffix
   * (zeta.io -> zeta.de) or national sites in two countries (lidl.de, lidl.fr -> lidl.bg). One
   * country's site speaks for that country alone (otto.fi is not otto.de). Null otherwise. A domain a brand claims itself
   * always wins, since the exact chain is tried first.
   */
  resolveHost(host: string): Brand | null {
    for (const candidate of lookupChain(host)) {
      const brand =
        this.brandOf(this.pinnedHost(candidate)) ?? this.brandOf(this.maps.byHost.get(candidate));
      if (brand) return brand;
    }
    const registrable = registrableDomain(host);
    if (!registrable) return null;
    const [label, suffix] = splitRegistrable(registrable);
    // only a country's suffix (co.uk, de, com.br) is the same brand's national site; a generic
    // one (.org, .io) is often a namesake's (msf.org is not msf.com's bank)
    if (!label || !isCountrySuffix(suffix)) return null;
    return (
      this.brandOf(this.maps.byHost.get(`${label}.com`)) ??
      this.brandOf(this.maps.byLabel.get(label))
    );
  }

  private brandOf(slug: string | undefined): Brand | null {
    return (slug && this.catalog.brand(slug)) || null;
  }
}
