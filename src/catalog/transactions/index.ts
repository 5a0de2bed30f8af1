import { Elysia } from "elysia";
import { type AuthDeps, authPlugin, noteMeter } from "../../guard";
import { ErrorBody, RateLimitedBody } from "../../http/errors";
import type { DiscoveryService } from "../discovery/service";
import type { EnrichmentService } from "../enrichment/service";
import { TransactionsBody, TransactionsResponse } from "./model";
import { resolveBatch, type TransactionMatcher } from "./service";

/** POST /v1/transactions: card-statement descriptors to brands, in batches. */
export function transactionsController(
  deps: AuthDeps & {
    transactions: TransactionMatcher;
    enrichment: EnrichmentService;
    discovery?: DiscoveryService;
  },
) {
  const { transactions, enrichment, discovery } = deps;
  return new Elysia({ prefix: "/v1", tags: ["brand"] }).use(authPlugin(deps)).post(
    "/transactions",
    ({ body, principal, request }) => {
      const { results, misses } = resolveBatch(
        transactions,
        body.transactions,
        principal.tier,
        (brand) => {
          enrichment.request(brand);
          discovery?.requestBrand(brand);
        },
      );
      if (misses.length) noteMeter(request, { miss: misses });
      return { results };
    },
    {
      metered: "batch",
      body: TransactionsBody,
      response: {
        200: TransactionsResponse,
        401: ErrorBody,
        413: ErrorBody,
        422: ErrorBody,
        429: RateLimitedBody,
      },
      detail: {
        summary: "Brands of up to 100 card-statement descriptors in one call",
        description:
          "Each descriptor (with its optional country and mcc) is answered exactly as GET /v1/brand?transaction= answers it: the brand (the BrandResponse, without its transaction field) and the transaction object, or brand null where that answers 404 merchant_not_found. Results in the order sent. At most 100 descriptors per call on paid and internal keys and 10 on free keys (more: 422 batch_too_large); an empty list, a descriptor outside 3..200 characters or a malformed country or mcc: 422 validation_error naming the field. A declared body over 64 KiB: 413 payload_too_large. One call counts once against the batch bucket. docs/transactions.md describes the rules.",
      },
    },
  );
}
