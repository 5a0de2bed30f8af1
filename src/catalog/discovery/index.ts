import { Elysia } from "elysia";
import { type Operators, requireOperator } from "../../guard";
import { ErrorBody } from "../../http/errors";
import { conflict, invalid } from "../../platform/domain-errors";
import {
  DiscoverBody,
  DiscoverResult,
  DiscoveryList,
  DiscoveryView,
  DomainParams,
  ListQuery,
} from "./model";
import { discoveryView, summarize } from "./records";
import type { DiscoveryService } from "./service";

const DISABLED =
  "Web discovery is off on this service (DISCOVERY=off): it makes no outbound request. Set DISCOVERY=on to discover domains.";

function requireEnabled(discovery: DiscoveryService) {
  if (!discovery.enabled) throw conflict("discovery_disabled", DISABLED);
}

function domainProblem(err: unknown): never {
  throw invalid(`Invalid domain: ${(err as Error).message}`);
}

/**
 * Operator routes for web logo discovery (mounted with the other /admin routes when
 * ADMIN_TOKEN is set): list what was discovered with its provenance, discover or rediscover
 * domains now, take a domain down for good.
 */
export function discoveryAdminController(deps: {
  discovery: DiscoveryService;
  operators: Operators;
}) {
  const { discovery } = deps;
  return new Elysia({ prefix: "/admin/discoveries", tags: ["admin"] })
    .onParse(({ request }) => {
      requireOperator(request, deps.operators);
    })
    .onTransform(({ request }) => {
      requireOperator(request, deps.operators);
    })
    .get(
      "",
      async ({ query }) => {
        const all = await discovery.list(query.status);
        const offset = query.offset ?? 0;
        const items = all.slice(offset, offset + (query.limit ?? 100)).map(discoveryView);
        return { items, total: all.length, stats: discovery.stats() };
      },
      {
        query: ListQuery,
        response: { 200: DiscoveryList, 401: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "List discovery records with provenance (operator)",
          description:
            "Newest first. Each record names the domain, its outcome, the catalog brand it applies to and, per stored asset, the URL it came from, when, its sha256 as fetched, its kind and size, score and where in the page it was found.",
        },
      },
    )
    .post(
      "",
      async ({ body }) => {
        requireEnabled(discovery);
        const results = [];
        for (const d of body.domains)
          results.push(await discovery.discover(d, { force: body.force }).catch(domainProblem));
        return { results: results.map(discoveryView), summary: summarize(results) };
      },
      {
        body: DiscoverBody,
        response: { 200: DiscoverResult, 401: ErrorBody, 409: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Discover domains now (operator)",
          description:
            "Fetches each domain's website now (at most 20 per call, one after another, each within the 15 s domain budget) and answers the records. A domain tried today or already found is answered from the store unless force is true. 409 discovery_disabled when DISCOVERY is off.",
        },
      },
    )
    .post(
      "/:domain/rediscover",
      async ({ params }) => {
        requireEnabled(discovery);
        return discoveryView(
          await discovery.discover(params.domain, { force: true }).catch(domainProblem),
        );
      },
      {
        params: DomainParams,
        response: { 200: DiscoveryView, 401: ErrorBody, 409: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Discover one domain again (operator)",
          description:
            "Fetches the site again even when it was tried today or found before; the new artwork replaces the old. A taken-down domain stays taken down (its record is answered).",
        },
      },
    )
    .delete(
      "/:domain",
      async ({ params, request }) =>
        discoveryView(
          await discovery
            .takedown(params.domain, requireOperator(request, deps.operators))
            .catch(domainProblem),
        ),
      {
        params: DomainParams,
        response: { 200: DiscoveryView, 401: ErrorBody, 422: ErrorBody },
        detail: {
          summary: "Take a domain's discovered artwork down for good (operator)",
          description:
            "Removes the discovered artwork at once (a brand discovery created disappears; a catalog brand goes back to having no artwork) and keeps a taken_down record: automatic and operator rediscovery never bring it back. A domain not discovered yet is blocked before it is.",
        },
      },
    );
}
