/**
 * Brand by domain or business e-mail (plain TS). Each domain in the catalog names one brand
 * (the catalog build settles clashes; a brand added at run time claims only unclaimed domains);
 * a host resolves to the brand of the most specific domain on its chain (see lookupChain).
 */
import type { Static } from "elysia";
import { Lru } from "../../platform/cache";
import { type Brand, VARIANTS } from "../built-catalog";
import { directoryFields } from "../model";
import { provenances, readOverHttp } from "../provenance";
import { contrastOf, cssVars, NOTICE } from "../service";
import type { CatalogDb } from "../store/catalog-db";
import { splitRegistrable } from "../store/schema";
import { isCountrySuffix, lookupChain, registrableDomain } from "./domain";
import type { BrandResponse } from "./model";

export interface BrandCatalog {
  readonly loaded: boolean;
  readonly database: CatalogDb;
  brandById(id: number): Brand | undefined;
  /** the brand an exact host names: a host an operator pinned to it, else its own domain */
  brandByHost(host: string): Brand | undefined;
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
    verified: b.verifiedAt !== null && !readOverHttp(b),
    verifiedAt: readOverHttp(b) ? null : b.verifiedAt,
    variants: VARIANTS.filter((v) => b.variants[v] !== undefined),
    provenance: provenances(b, VARIANTS),
    contrastTextColor: contrastOf(b),
    _css: cssVars(b),
    _notice: NOTICE,
    ...directoryFields(b),
  };
}

/**
 * Resolves hosts through the catalog database's `domains` and `labels` tables (written with
 * each brand: src/catalog/store/schema.ts): no map of every domain in memory, only a bounded
 * cache of the hosts asked for.
 */
export class BrandResolver {
  /** host -> brand id (null: none), for the hosts asked for; emptied on any catalog change */
  private hosts = new Lru<string, number | null>(100_000);

  constructor(private catalog: BrandCatalog) {
    catalog.onChange(() => this.hosts.clear());
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
    let id = this.hosts.get(host);
    if (id === undefined) {
      id = this.lookup(host);
      this.hosts.set(host, id);
    }
    return id === null ? null : (this.catalog.brandById(id) ?? null);
  }

  /** The brand with this id as the catalog has it now. */
  brandById(id: number): Brand | null {
    return this.catalog.brandById(id) ?? null;
  }

  /** resolveHost without the cache: the brand's id, or null */
  private lookup(host: string): number | null {
    if (!this.catalog.loaded) return null;
    for (const candidate of lookupChain(host)) {
      const b = this.catalog.brandByHost(candidate);
      if (b) return b.id;
    }
    const registrable = registrableDomain(host);
    if (!registrable) return null;
    const [label, suffix] = splitRegistrable(registrable);
    // only a country's suffix (co.uk, de, com.br) is the same brand's national site; a generic
    // one (.org, .io) is often a namesake's (msf.org is not msf.com's bank)
    if (!label || !isCountrySuffix(suffix)) return null;
    return (
      this.catalog.brandByHost(`${label}.com`)?.id ??
      this.idOf(this.catalog.database.idByLabel(label))
    );
  }

  /** the id when that brand is there */
  private idOf(id: number | undefined): number | null {
    return id !== undefined && this.catalog.brandById(id) ? id : null;
  }
}
