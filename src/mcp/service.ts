import { Buffer } from "node:buffer";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AccountService } from "../accounts/service";
import type { AssetService, ServedSvg } from "../assets/service";
import { lookupBrand } from "../catalog/brand/lookup";
import { type BrandResolver, toBrandView } from "../catalog/brand/service";
import { VARIANTS, type Variant } from "../catalog/built-catalog";
import type { EnrichmentService } from "../catalog/enrichment/service";
import type { SearchIndex } from "../catalog/search/service";
import { normalizeQuery } from "../catalog/search/text";
import type { CatalogService } from "../catalog/service";
import {
  resolveBatch,
  type TransactionInput,
  type TransactionMatcher,
} from "../catalog/transactions/service";
import { httpError, rateLimited, windowLimited } from "../http/errors";
import { invalid, serviceNotFound } from "../platform/domain-errors";
import { type Bucket, RATE_LIMITS } from "../quota/limits";
import type { Principal } from "../quota/principal";
import type { RateLimiter } from "../quota/rate-limit";
import type { QuotaService } from "../quota/service";
import { CurrentUsageService } from "../usage/current/service";
import type { UsageRecorder } from "../usage/log/recorder";
import {
  closeMeter,
  dailyLimitMessage,
  type Meter,
  type MeterTarget,
  startMeter,
} from "../usage/meter";
import {
  BrandOutput,
  ListInput,
  ListOutput,
  LogoInput,
  LogoOutput,
  ResolveInput,
  SearchInput,
  SearchOutput,
  ServiceEntry,
  SlugInput,
  TransactionsInput,
  TransactionsOutput,
  UsageOutput,
} from "./model";
import { errorBody, ok, type QuotaMeta, quotaMeta, resourceError, toolError } from "./results";

export interface McpDeps {
  accounts: AccountService;
  quota: QuotaService;
  usage: UsageRecorder;
  limiter: RateLimiter;
  catalog: CatalogService;
  search: SearchIndex;
  brands: BrandResolver;
  transactions: TransactionMatcher;
  enrichment: EnrichmentService;
  assets: AssetService;
  upgradeUrl: string;
}

/** Largest JSON-RPC request body read (a tool call is a few hundred bytes). */
export const MCP_MAX_BODY_BYTES = 64 * 1024;

export const SERVER_INFO = { name: "brand-asset-api", version: "1.0.0" };

const INSTRUCTIONS =
  "Brand names, colors and logo artwork. Find a brand with search_brands (by name), resolve_brand " +
  "(by domain or business e-mail) or resolve_transactions (card-statement lines), then use its slug " +
  "with get_brand (colors, CSS variables) and get_logo " +
  "(SVG markup or a PNG). Every call except list_catalog and get_usage counts against the API key's daily " +
  "quota for its bucket, exactly like the REST API; get_usage shows what is left today.";

/** Same messages as GET /v1/brand (catalog/brand/index.ts). */
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;

interface Metered<T> {
  value: T;
  quota: QuotaMeta;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? "";

/**
 * The MCP server of the brand API: the REST API's services as MCP tools and resources, under the
 * caller's key, quotas and tier rules. Stateless: every HTTP request gets a fresh server and
 * transport (sessionIdGenerator undefined), so any instance can answer any request.
 */
export class McpService {
  private usageReport: CurrentUsageService;

  constructor(private deps: McpDeps) {
    this.usageReport = new CurrentUsageService(deps.quota, deps.accounts);
  }

  /** Answers one HTTP request to /mcp for an authenticated caller. */
  async handle(request: Request, caller: Principal): Promise<Response> {
    const principal = await this.keyed(caller);
    const server = this.server(principal);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      // JSON responses are complete once handleRequest resolves: nothing outlives the request
      await server.close();
    }
  }

  /**
   * Quotas are kept per API key. A bearer-token caller (no key in hand) is counted on its
   * account's active key (the newest), so GET /v1/usage and the key's caps see its calls.
   */
  private async keyed(p: Principal): Promise<Principal> {
    if (p.keyId) return p;
    const account = await this.deps.accounts.getAccount(p.accountId);
    const active = account?.keys.filter((k) => !k.revokedAt).at(-1);
    return active ? { ...p, keyId: active.id } : p;
  }

  /**
   * Runs `fn` as one metered call of `bucket`: one unit is consumed through the QuotaGate and the
   * usage event recorded with the REST twin's status (200, 404, 422, ...; 429 when refused,
   * which consumes nothing; a server error refunds), exactly like the `metered` macro.
   */
  private async metered<T>(
    principal: Principal,
    bucket: Bucket,
    target: MeterTarget,
    fn: (meter: Meter) => T | Promise<T>,
  ): Promise<Metered<T>> {
    const pending = startMeter(this.deps, principal, bucket, target);
    const { decision, meter } = pending instanceof Promise ? await pending : pending;
    if (!decision.allowed) {
      closeMeter(meter, 429);
      throw rateLimited(
        dailyLimitMessage(decision.limit, bucket, principal),
        decision.resetSeconds,
        this.deps.upgradeUrl,
      );
    }
    try {
      const value = await fn(meter);
      await closeMeter(meter, 200);
      return { value, quota: quotaMeta(bucket, decision) };
    } catch (err) {
      await closeMeter(meter, httpError(err)?.status ?? 500);
      throw err;
    }
  }

  /** A tool handler: refusals (and anything unexpected) become MCP tool errors. */
  private tool<A>(fn: (args: A) => Promise<CallToolResult>) {
    return async (args: A): Promise<CallToolResult> => {
      try {
        return await fn(args);
      } catch (err) {
        return toolError(errorBody(err));
      }
    };
  }

  private searchBrands(p: Principal, q: string, limit: number) {
    return this.metered(
      p,
      "search",
      { route: "mcp:search_brands", slug: null, variant: null },
      (meter) => {
        const query = normalizeQuery(q);
        if ([...query].length < 2)
          throw invalid(
            "q must have at least 2 characters (after trimming and collapsing whitespace).",
            "query_too_short",
          );
        const matches = this.deps.search
          .search(query, limit)
          .map((b) => this.deps.catalog.viewOf(b));
        if (matches.length === 0) meter.miss = [`query:${query}`];
        return { matches, query, total: matches.length };
      },
    );
  }

  private getBrand(p: Principal, slug: string, route: string) {
    return this.metered(p, "catalog", { route, slug, variant: null }, (meter) => {
      const brand = this.deps.catalog.brand(slug);
      if (!brand) {
        meter.miss = [`slug:${slug.toLowerCase()}`];
        throw serviceNotFound(slug);
      }
      return this.deps.catalog.viewOf(brand);
    });
  }

  private resolveBrand(p: Principal, domain: string | undefined, email: string | undefined) {
    return this.metered(
      p,
      "domain",
      { route: "mcp:resolve_brand", slug: null, variant: null },
      (meter) => {
        const brand = lookupBrand(this.deps.brands, { domain, email }, (host, kind) => {
          meter.miss = [`${kind}:${host}`];
        });
        meter.slug = brand.slug;
        this.deps.enrichment.request(brand);
        return toBrandView(brand);
      },
    );
  }

  /** POST /v1/transactions as a tool: one batch count, each line as GET /v1/brand?transaction= answers it. */
  private resolveTransactions(p: Principal, items: TransactionInput[]) {
    return this.metered(
      p,
      "batch",
      { route: "mcp:resolve_transactions", slug: null, variant: null },
      (meter) => {
        const { results, misses } = resolveBatch(this.deps.transactions, items, p.tier, (b) =>
          this.deps.enrichment.request(b),
        );
        if (misses.length) meter.miss = misses;
        return { results };
      },
    );
  }

  /** The SVG to serve (svg bucket) or the PNG (png bucket), with the variant rules of GET /v1/svg and /v1/png. */
  private logo(
    p: Principal,
    slug: string,
    variant: Variant,
    format: "svg" | "png",
    size: number,
    route: string,
  ) {
    return this.metered(p, format, { route, slug, variant, format }, async (meter) => {
      const resolved = this.deps.assets.resolve(slug, variant, p.tier);
      if (!resolved || resolved.variant === "placeholder")
        meter.miss = [`slug:${slug.toLowerCase()}`];
      if (!resolved) throw serviceNotFound(slug);
      if (format === "svg") return { served: resolved, bytes: null };
      const source = this.deps.assets.rasterSource(resolved, size, "png");
      const cached = this.deps.assets.cachedRaster(source, size, "png");
      if (cached) return { served: source, bytes: cached };
      const out = await this.deps.assets.raster(source, size, "png");
      return { served: out.source, bytes: out.bytes };
    });
  }

  private async usageOf(p: Principal) {
    const d = await this.deps.limiter.hit(RATE_LIMITS.usage, `account:${p.accountId}`);
    if (!d.allowed) throw windowLimited(RATE_LIMITS.usage, d.retryAfter, this.deps.upgradeUrl);
    return this.usageReport.report(p);
  }

  /** One MCP server bound to the caller. */
  private server(p: Principal): McpServer {
    const server = new McpServer(SERVER_INFO, {
      instructions: INSTRUCTIONS,
      capabilities: { tools: {}, resources: {} },
    });

    this.brandTools(server, p);
    this.logoListUsageTools(server, p);
    this.resources(server, p);
    return server;
  }

  /** search_brands, get_brand, resolve_brand: finding a brand, metered like their REST twins. */
  private brandTools(server: McpServer, p: Principal): void {
    server.registerTool(
      "search_brands",
      {
        title: "Search brands",
        description:
          "Find brands by name, slug, alias or domain (typo-tolerant), best match first; use a match's slug with get_brand or get_logo. Counts against the search bucket.",
        inputSchema: SearchInput,
        outputSchema: SearchOutput,
        annotations: { title: "Search brands", ...READ_ONLY },
      },
      this.tool(async ({ q, limit }: { q: string; limit: number }) => {
        const r = await this.searchBrands(p, q, limit);
        return ok(r.value, r.quota);
      }),
    );

    server.registerTool(
      "get_brand",
      {
        title: "Get brand",
        description:
          "A brand's catalog entry by slug: name, brand and dark-mode colors, color roles and ready-made CSS variables. Counts against the catalog bucket.",
        inputSchema: SlugInput,
        outputSchema: ServiceEntry,
        annotations: { title: "Get brand", ...READ_ONLY },
      },
      this.tool(async ({ slug }: { slug: string }) => {
        const r = await this.getBrand(p, slug, "mcp:get_brand");
        return ok({ ...r.value }, r.quota);
      }),
    );

    server.registerTool(
      "resolve_brand",
      {
        title: "Resolve brand from domain or e-mail",
        description:
          "The brand behind a domain/URL or a business e-mail address (pass exactly one), with its logo variants and colors. Consumer mail providers are refused. Counts against the domain bucket.",
        inputSchema: ResolveInput,
        outputSchema: BrandOutput,
        annotations: { title: "Resolve brand", ...READ_ONLY },
      },
      this.tool(async ({ domain, email }: { domain?: string; email?: string }) => {
        const r = await this.resolveBrand(p, domain, email);
        return ok({ ...r.value }, r.quota);
      }),
    );

    server.registerTool(
      "resolve_transactions",
      {
        title: "Resolve card-statement lines to brands",
        description:
          "The merchant brand behind each card-statement line (descriptor) as a bank shows it, e.g. SQ *BLUE BOTTLE COFFEE OAKLAND or AMZN MKTP US*2K8J90TQ2, with an optional country and merchant category code; brand null (with what was read: the intermediary, a bank operation) where no brand matches with enough confidence. Counts once against the batch bucket.",
        inputSchema: TransactionsInput,
        outputSchema: TransactionsOutput,
        annotations: { title: "Resolve statement lines", ...READ_ONLY },
      },
      this.tool(async ({ transactions }: { transactions: TransactionInput[] }) => {
        const r = await this.resolveTransactions(p, transactions);
        return ok({ ...r.value }, r.quota);
      }),
    );
  }

  /** get_logo (metered), list_catalog and get_usage (not metered). */
  private logoListUsageTools(server: McpServer, p: Principal): void {
    server.registerTool(
      "get_logo",
      {
        title: "Get logo",
        description:
          "A brand's logo as SVG markup (text) or a PNG image; states the variant served (free keys get mono only; missing variants fall back to mono). Counts against the svg or png bucket.",
        inputSchema: LogoInput,
        outputSchema: LogoOutput,
        annotations: { title: "Get logo", ...READ_ONLY },
      },
      this.tool(
        async (a: { slug: string; variant: Variant; format: "svg" | "png"; size: number }) => {
          const {
            value: { served, bytes },
            quota,
          } = await this.logo(p, a.slug, a.variant, a.format, a.size, "mcp:get_logo");
          const mimeType = a.format === "svg" ? "image/svg+xml" : "image/png";
          const note = describeServed(a.slug, a.variant, served);
          const structured = {
            slug: a.slug,
            format: a.format,
            mimeType,
            variant: served.variant,
            requested: a.variant,
            restricted: served.restricted !== null,
            size: a.format === "png" ? a.size : null,
            note,
          };
          const body: CallToolResult["content"] = bytes
            ? [{ type: "image", data: Buffer.from(bytes).toString("base64"), mimeType }]
            : [{ type: "text", text: served.svg }];
          return {
            structuredContent: structured,
            content: [...body, { type: "text", text: note }],
            _meta: { quota },
          };
        },
      ),
    );

    server.registerTool(
      "list_catalog",
      {
        title: "List catalog",
        description:
          "One page of the whole catalog in id order (limit 1..200, offset); prefer search_brands to find one brand. Not metered.",
        inputSchema: ListInput,
        outputSchema: ListOutput,
        annotations: { title: "List catalog", ...READ_ONLY },
      },
      this.tool(async ({ limit, offset }: { limit: number; offset: number }) =>
        ok({ ...this.deps.catalog.list(limit, offset) }),
      ),
    );

    server.registerTool(
      "get_usage",
      {
        title: "Get usage",
        description:
          "Today's (UTC) call counts and daily limits per bucket for this API key; check it before a large batch of calls. Not metered.",
        inputSchema: {},
        outputSchema: UsageOutput,
        annotations: { title: "Get usage", ...READ_ONLY },
      },
      this.tool(async () => ok({ ...(await this.usageOf(p)) })),
    );
  }

  /** The brand:// and logo:// resource templates, metered like get_brand and get_logo. */
  private resources(server: McpServer, p: Principal): void {
    server.registerResource(
      "brand",
      new ResourceTemplate("brand://{slug}", { list: undefined }),
      {
        title: "Brand catalog entry",
        description:
          "The catalog entry of a brand as JSON (like get_brand). Counts against the catalog bucket.",
        mimeType: "application/json",
      },
      async (uri, vars) => {
        try {
          const r = await this.getBrand(p, one(vars.slug), "mcp:brand://{slug}");
          return {
            contents: [
              { uri: uri.href, mimeType: "application/json", text: JSON.stringify(r.value) },
            ],
            _meta: { quota: r.quota },
          };
        } catch (err) {
          throw resourceError(err);
        }
      },
    );

    server.registerResource(
      "logo",
      new ResourceTemplate("logo://{slug}/{variant}", {
        list: undefined,
        complete: { variant: (value) => VARIANTS.filter((v) => v.startsWith(value)) },
      }),
      {
        title: "Brand logo (SVG)",
        description:
          "A brand's logo as SVG markup; variant is mono, color, dark, light, wordmark or icon (free keys get mono). Counts against the svg bucket.",
        mimeType: "image/svg+xml",
      },
      async (uri, vars) => {
        const slug = one(vars.slug);
        const variant = one(vars.variant);
        // an unknown variant is refused before metering, like GET /v1/svg's 422
        if (!(VARIANTS as readonly string[]).includes(variant))
          throw resourceError(
            invalid(`Invalid variant ${JSON.stringify(variant)}: one of ${VARIANTS.join(", ")}`),
          );
        try {
          const {
            value: { served },
            quota,
          } = await this.logo(p, slug, variant as Variant, "svg", 0, "mcp:logo://{slug}/{variant}");
          return {
            _meta: { quota },
            contents: [
              {
                uri: uri.href,
                mimeType: "image/svg+xml",
                text: served.svg,
                _meta: {
                  variant: served.variant,
                  note: describeServed(slug, variant as Variant, served),
                },
              },
            ],
          };
        } catch (err) {
          throw resourceError(err);
        }
      },
    );
  }
}

/** "Served the mono variant of github (color asked for: the free tier gets mono only)." */
function describeServed(slug: string, requested: Variant, served: ServedSvg): string {
  if (served.variant === "placeholder")
    return `No artwork is stored for ${slug}: served a generic placeholder.`;
  let why = "";
  if (served.restricted) why = ` (${served.restricted} asked for: the free tier serves mono only)`;
  else if (served.variant !== requested) why = ` (${requested} is not available for this brand)`;
  return `Served the ${served.variant} variant of ${slug}${why}.`;
}
