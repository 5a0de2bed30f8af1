import { Elysia } from "elysia";
import { type AuthDeps, authPlugin, noteMeter } from "../../guard";
import { ApiError, ErrorBody, RateLimitedBody } from "../../http/errors";
import { TRANSACTIONS_CAP } from "../../quota/limits";
import { toBrandView } from "../brand/service";
import type { DiscoveryService } from "../discovery/service";
import type { EnrichmentService } from "../enrichment";
import { TransactionsBody, TransactionsResponse } from "./model";
import type { TransactionMatcher } from "./service";

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
      const cap = TRANSACTIONS_CAP[principal.tier];
      if (body.transactions.length > cap)
        throw new ApiError(
          422,
          "batch_too_large",
          `At most ${cap} descriptors per call on the ${principal.tier} tier (got ${body.transactions.length}).`,
        );
      const misses: string[] = [];
      const results = body.transactions.map((item) => {
        const r = transactions.match(item);
        if (r.miss) misses.push(r.miss);
        if (r.brand) {
          enrichment.request(r.brand);
          discovery?.requestBrand(r.brand);
        }
        return {
          descriptor: item.descriptor,
          brand: r.brand ? toBrandView(r.brand) : null,
          transaction: r.transaction,
        };
      });
      if (misses.length) noteMeter(request, { miss: [...new Set(misses)] });
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
