import { Elysia } from "elysia";
import { type AuthDeps, authPlugin, noteMeter } from "../../guard";
import { ErrorBody, RateLimitedBody } from "../../http/errors";
import { DomainError } from "../../platform/domain-errors";
import type { DiscoveryService } from "../discovery/service";
import type { EnrichmentService } from "../enrichment/service";
import { hasArtwork } from "../service";
import type { Brand } from "../types";
import { lookupBrand } from "./lookup";
import { BrandQuery, BrandResponse } from "./model";
import { type BrandResolver, toBrandView } from "./service";

export const BRAND_DESCRIPTION = `Resolve a catalog entry from a domain or a business e-mail address: exactly one of domain and email.

Domain input is forgiving: case, a scheme, user info, a port, a path, query or fragment, trailing dots and one leading www. are ignored, and internationalized names are converted to punycode. The host is looked up as given, then each parent domain down to its registrable domain (Public Suffix List, private suffixes included, so mail.google.com can have its own brand, docs.stripe.com finds Stripe, and someone.github.io is not GitHub).

An e-mail address resolves through its domain the same way, unless it is malformed, uses an IP literal, belongs to a consumer mail provider (the email-providers list: gmail.com, outlook.com, yahoo.co.uk, ...), or has no registrable domain: then 422 email_not_brand_domain.

Errors: neither or both parameters, domain outside 3..253 characters or not a host name (an IP address included), email over 254 characters: 422 validation_error. No brand for the domain: 404 domain_not_found.

The response carries Cache-Control: public, max-age=300. When web discovery is on (DISCOVERY=on), a lookup of a domain no brand has (404) or of a brand without artwork queues a background read of that domain's website; once it finds a name and a logo, the domain's brand exists (or the brand has artwork) and later lookups show it. With wait=<ms> (0..10000), a lookup that would answer 404 while that discovery is queued or running waits for it instead, up to wait ms: 200 with the brand when it found one, else the same 404; a lookup of a catalog brand without artwork waits the same way for its discovery, then answers the brand as it is (with the artwork found in time). At most 4 waits per API key at a time (a lookup past them answers at once, as without wait); a wait holds no worker. When a matched brand still lacks data the service can derive (dark and light variants from its mono mark, color roles, verifiedAt), the response is sent at once and a background job fills the gap; later requests show more variants. Counts against the domain bucket (every authenticated answer except 429 and 5xx).`;

/** Concurrent `wait`s one API key may hold; a lookup past them answers at once. */
export const MAX_WAITS_PER_KEY = 4;

/** GET /v1/brand */
export function brandController(
  deps: AuthDeps & {
    brands: BrandResolver;
    enrichment: EnrichmentService;
    discovery?: DiscoveryService;
  },
) {
  const { brands, enrichment, discovery } = deps;
  /** waits held per key id (or account, for bearer callers) */
  const waits = new Map<string, number>();
  /**
   * The brand once the domain's queued or running discovery ends (within `ms`), or the
   * lookup's 404 again. At most MAX_WAITS_PER_KEY per key at a time.
   */
  async function waitForDiscovery(key: string, host: string, ms: number, miss: DomainError) {
    if (!discovery || !(await held(key, () => discovery.waitFor(host, ms)))) throw miss;
    return brands.resolveHost(host) ?? Promise.reject(miss);
  }

  /** `wait` run as one of the key's waits; false when the key holds MAX_WAITS_PER_KEY. */
  async function held(key: string, wait: () => Promise<boolean>): Promise<boolean> {
    const count = waits.get(key) ?? 0;
    if (count >= MAX_WAITS_PER_KEY) return false;
    waits.set(key, count + 1);
    try {
      return await wait();
    } finally {
      const left = (waits.get(key) ?? 1) - 1;
      if (left) waits.set(key, left);
      else waits.delete(key);
    }
  }

  /**
   * A catalog brand without artwork whose discovery is queued or running: the brand as it is
   * once that discovery ends (within `ms`), else as it was.
   */
  async function withDiscoveredArtwork(key: string, brand: Brand, ms: number): Promise<Brand> {
    if (!discovery || hasArtwork(brand) || !discovery.pendingFor(brand)) return brand;
    if (!(await held(key, () => discovery.waitForBrand(brand, ms)))) return brand;
    return brands.brandById(brand.id) ?? brand;
  }

  return new Elysia({ prefix: "/v1", tags: ["brand"] }).use(authPlugin(deps)).get(
    "/brand",
    async ({ query, request, set, principal }) => {
      let missed = null as string | null;
      let brand: Brand;
      try {
        brand = lookupBrand(brands, query, (host, kind) => {
          missed = host;
          noteMeter(request, { miss: [`${kind}:${host}`] });
          discovery?.requestDomain(host);
        });
      } catch (err) {
        if (!query.wait || missed === null || !(err instanceof DomainError)) throw err;
        const key = principal.keyId ?? principal.accountId;
        brand = await waitForDiscovery(key, missed, query.wait, err);
      }
      discovery?.requestBrand(brand);
      if (query.wait)
        brand = await withDiscoveredArtwork(
          principal.keyId ?? principal.accountId,
          brand,
          query.wait,
        );
      noteMeter(request, { slug: brand.slug });
      enrichment.request(brand);
      set.headers["cache-control"] = "public, max-age=300";
      return toBrandView(brand);
    },
    {
      metered: "domain",
      query: BrandQuery,
      response: {
        200: BrandResponse,
        401: ErrorBody,
        404: ErrorBody,
        422: ErrorBody,
        429: RateLimitedBody,
      },
      detail: { summary: "Brand by domain or business e-mail", description: BRAND_DESCRIPTION },
    },
  );
}
