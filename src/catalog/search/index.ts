import { Elysia, type Static } from "elysia";
import { type AuthDeps, authPlugin, noteMeter } from "../../guard";
import { ErrorBody, RateLimitedBody } from "../../http/errors";
import { documentedResponses, JSON_TYPE, preSerialized } from "../../http/json-responses";
import { decimalQuery } from "../../http/params";
import { invalid } from "../../platform/domain-errors";
import type { CatalogService } from "../service";
import { SearchQuery, SearchResponse } from "./model";
import { SearchResponses } from "./responses";
import type { SearchIndex } from "./service";
import { normalizeQuery } from "./text";

export const SEARCH_DESCRIPTION = `Catalog entries whose name, slug, alias or domain matches q, best first.

q is normalized (Unicode NFKC, lower-cased, inner whitespace collapsed, trimmed) and echoed as query. Fewer than 2 characters after that, or no q at all: 422 query_too_short. More than 100 characters as sent, or limit outside 1..50: 422 validation_error.

Ranking, in tiers: (1) exact slug, name, alias or domain (also ignoring spaces, dots and dashes, so "vs code" finds VSCode); (2) a name, alias, slug or domain that starts with q; (3) a later word of a multi-word name that starts with q ("drive" finds Google Drive); (4) every word of q found in the brand's names in any order, each word allowed one typo from 4 characters and two from 8 (a typo inserts, deletes or replaces a character, or swaps two neighbouring ones, so "gihtub" finds GitHub). Within a tier: closer first (fewer characters left over, fewer typos), then the index score, then the shorter name, then the lower id, so the same query always gives the same order.

total is the number of matches in this response. Counts against the search bucket (every authenticated answer except 429 and 5xx).`;

/** GET /v1/search */
export function searchController(
  deps: AuthDeps & { catalog: CatalogService; search: SearchIndex },
) {
  const { catalog, search } = deps;
  const responses = new SearchResponses(search, catalog);
  return new Elysia({ prefix: "/v1", tags: ["search"] })
    .use(authPlugin(deps))
    .use(decimalQuery)
    .get(
      "/search",
      ({ query, request, set }) => {
        const q = normalizeQuery(query.q ?? "");
        if ([...q].length < 2)
          throw invalid(
            "Query parameter q must have at least 2 characters (after trimming and collapsing whitespace).",
            "query_too_short",
          );
        // a cached or freshly assembled SearchResponse body (search/responses.ts); its entries
        // are the catalog's views, each checked against ServiceResponse in the catalog tests
        set.headers["content-type"] = JSON_TYPE;
        const json = responses.json(q, query.limit);
        if (json.endsWith(',"total":0}')) noteMeter(request, { miss: [`query:${q}`] });
        return json as unknown as Static<typeof SearchResponse>;
      },
      {
        metered: "search",
        query: SearchQuery,
        decimalQuery: SearchQuery,
        // 200 is pre-serialized text: validated as text here, documented with its schema below
        response: {
          200: preSerialized(SearchResponse),
          401: ErrorBody,
          422: ErrorBody,
          429: RateLimitedBody,
        },
        detail: {
          summary: "Search the catalog by name, slug, alias or domain",
          description: SEARCH_DESCRIPTION,
          responses: documentedResponses({
            200: SearchResponse,
            401: ErrorBody,
            422: ErrorBody,
            429: RateLimitedBody,
          }),
        },
      },
    );
}
