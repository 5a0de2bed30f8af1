import type { ElysiaSwaggerConfig } from "@elysiajs/swagger";
import { Elysia } from "elysia";
import { accountsController } from "./accounts";
import { adminController } from "./admin";
import { assetsController } from "./assets";
import { billingController } from "./billing";
import { catalogController } from "./catalog";
import { brandController } from "./catalog/brand";
import { discoveryAdminController } from "./catalog/discovery";
import { searchController } from "./catalog/search";
import { type Suggest, suggestSlugs } from "./catalog/search/suggest";
import { transactionsController } from "./catalog/transactions";
import type { Deps } from "./deps";
import { galleryController } from "./gallery";
import { GalleryService } from "./gallery/service";
import { type Operators, operatorsOf } from "./guard";
import { healthController } from "./health";
import { cors } from "./http/cors";
import { errorPlugin } from "./http/error-plugin";
import { openApiDocs } from "./http/openapi";
import { requestLimits } from "./http/request-limits";
import { requestLog } from "./http/request-log";
import { httpMetrics } from "./http/request-metrics";
import { securityHeaders } from "./http/security";
import { imagesController } from "./images";
import { mcpController } from "./mcp";
import { metricsController } from "./metrics";
import { reportsController } from "./reports";
import { correctionsAdminController } from "./reports/admin";
import { analyticsController } from "./usage/analytics";
import { analyticsAdminController } from "./usage/analytics/admin";
import { usageCurrentController } from "./usage/current";
import { visitorCounterController } from "./visitor-counter";
import { webController } from "./web";

/**
 * The document's info.license: the service is not published under an open licence; the artwork
 * it serves keeps its sources' licences (docs/attribution.md). `identifier` (an SPDX reference)
 * is OpenAPI 3.1's; the plugin's types know 3.0's license object only.
 */
const LICENSE = {
  name: "Proprietary. Brand artwork keeps the licence of its source (docs/attribution.md)",
  identifier: "LicenseRef-Proprietary",
} as { name: string };

/** The OpenAPI document's own parts: info, tags, security schemes (the routes add their paths). */
const DOCUMENTATION: ElysiaSwaggerConfig["documentation"] = {
  // TypeBox schemas are JSON Schema (const, type: "null", patternProperties): 3.1's dialect
  openapi: "3.1.0",
  info: {
    title: "Brand Asset API",
    version: "1.0.0",
    license: LICENSE,
    description:
      "Brand names, colors and logo artwork (SVG, PNG, WebP) by slug, domain or business e-mail. Every /v1 route needs the X-API-Key header unless stated.",
  },
  // by task: finding brands and artwork first, then accounts and usage; health,
  // operator and MCP last (the reference page hides admin, mcp and the webhook)
  tags: [
    { name: "catalog", description: "List and read catalog entries, alone or in batches" },
    { name: "search", description: "Find brands by name, slug or domain words" },
    {
      name: "brand",
      description: "Look a brand up by domain, business e-mail or card-statement descriptor",
    },
    { name: "assets", description: "Logo artwork as SVG, PNG and WebP" },
    {
      name: "images",
      description: "Logos for <img> tags: signed and publishable image URLs",
    },
    { name: "gallery", description: "Public search and thumbnails: no key, capped per IP" },
    { name: "auth", description: "Sign up, log in, tokens, password and key" },
    { name: "usage", description: "Today's quota use and the usage history" },
    { name: "billing", description: "Stripe checkout, billing portal and webhook" },
    { name: "public", description: "Public widgets (visitor counter)" },
    { name: "health", description: "Liveness and readiness" },
    { name: "mcp", description: "Model Context Protocol server for AI agents" },
    { name: "admin", description: "Operator routes (ADMIN_TOKEN or ADMIN_TOKENS)" },
  ],
  components: {
    securitySchemes: {
      apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
      bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
    },
  },
  security: [{ apiKey: [] }],
};

/** Composes the feature controllers into one app: a web-standard fetch handler. */
export function createApp(deps: Deps) {
  const auth = authDeps(deps);
  // normalize: "typebox" — unknown query parameters (cache-busters such as ?v=2) are ignored
  // and undeclared response fields are stripped. Elysia's default normalizer (exact-mirror)
  // wrongly rejects Record<…, Union<Object, Null>> beside an Integer (the batch response).
  // standardHostname: false: Elysia otherwise finds the path by skipping 11 characters of the URL,
  // which breaks every route for a Host shorter than 4 characters without a port (`Host: api`
  // behind a proxy). The server speaks plain HTTP (TLS ends at a proxy), so URLs start "http://".
  const app = new Elysia({ normalize: "typebox", handler: { standardHostname: false } })
    .use(errorPlugin)
    .use(securityHeaders)
    .use(requestLimits)
    .use(cors(deps.config.CORS_ORIGINS))
    .use(requestLog({ mode: deps.config.LOG_REQUESTS, trustProxy: deps.config.TRUST_PROXY }))
    .use(httpMetrics)
    .use(
      openApiDocs({
        path: "/swagger",
        exclude: ["/swagger", "/swagger/json"],
        // document /.well-known/jwks.json (the plugin skips paths with a dot by default)
        excludeStaticFile: false,
        documentation: DOCUMENTATION,
      }),
    )
    .use(healthController(deps))
    .use(webController())
    .use(brandControllers(deps, auth))
    .use(callerControllers(deps, auth))
    .use(publicControllers(deps))
    .use(
      accountsController({
        ...auth,
        auth: deps.auth,
        access: deps.access,
        limiter: deps.limiter,
        trustProxy: deps.config.TRUST_PROXY,
      }),
    );
  if (deps.config.METRICS_TOKEN)
    app.use(
      metricsController({
        catalog: deps.catalog,
        enrichment: deps.enrichment,
        assets: deps.assets,
        usageStats: deps.usageStats,
        token: deps.config.METRICS_TOKEN,
      }),
    );
  const operators = operatorsOf(deps.config);
  if (operators) app.use(operatorControllers(deps, operators));
  return app;
}

/** What the route guards of every controller need: who calls, their quota, the usage recorder. */
const authDeps = (deps: Deps) => ({
  accounts: deps.accounts,
  quota: deps.quota,
  usage: deps.usage,
  upgradeUrl: deps.config.UPGRADE_URL,
  verifyBearer: deps.verifyBearer,
});
type AuthDeps = ReturnType<typeof authDeps>;

/** Brands, their artwork and lookups: catalog, assets, image URLs, search, by domain or descriptor. */
function brandControllers(deps: Deps, auth: AuthDeps) {
  const suggest: Suggest = (slug) => suggestSlugs(deps.search, slug);
  return new Elysia()
    .use(catalogController({ ...auth, catalog: deps.catalog, suggest }))
    .use(assetsController({ ...auth, assets: deps.assets, suggest }))
    .use(
      imagesController({
        ...auth,
        assets: deps.assets,
        brands: deps.brands,
        signer: deps.signer,
        publishable: deps.publishable,
        publicUrl: deps.config.PUBLIC_URL ?? "",
      }),
    )
    .use(searchController({ ...auth, catalog: deps.catalog, search: deps.search }))
    .use(
      brandController({
        ...auth,
        brands: deps.brands,
        enrichment: deps.enrichment,
        discovery: deps.discovery,
        transactions: deps.transactions,
      }),
    )
    .use(
      transactionsController({
        ...auth,
        transactions: deps.transactions,
        enrichment: deps.enrichment,
        discovery: deps.discovery,
      }),
    );
}

/** What a key or token calls besides lookups: its usage, the MCP tools, analytics, billing, reports. */
function callerControllers(deps: Deps, auth: AuthDeps) {
  return new Elysia()
    .use(
      usageCurrentController({
        ...auth,
        quota: deps.quota,
        limiter: deps.limiter,
        trustProxy: deps.config.TRUST_PROXY,
      }),
    )
    .use(
      mcpController({
        ...auth,
        quota: deps.quota,
        limiter: deps.limiter,
        catalog: deps.catalog,
        search: deps.search,
        brands: deps.brands,
        transactions: deps.transactions,
        enrichment: deps.enrichment,
        assets: deps.assets,
      }),
    )
    .use(
      analyticsController({
        ...auth,
        limiter: deps.limiter,
        trustProxy: deps.config.TRUST_PROXY,
        usage: deps.store.usage,
        exportSettleMs: deps.config.USAGE_EXPORT_SETTLE_MS,
        hourlyDays: deps.config.USAGE_HOURLY_DAYS,
      }),
    )
    .use(billingController({ ...auth, billing: deps.billing }))
    .use(
      reportsController({
        ...auth,
        limiter: deps.limiter,
        trustProxy: deps.config.TRUST_PROXY,
        corrections: deps.corrections,
      }),
    );
}

/** The public widgets, without a key and capped per IP: the gallery, the visitor counter. */
function publicControllers(deps: Deps) {
  return new Elysia()
    .use(
      galleryController({
        gallery: new GalleryService(deps.search, deps.assets),
        limiter: deps.limiter,
        trustProxy: deps.config.TRUST_PROXY,
        upgradeUrl: deps.config.UPGRADE_URL,
      }),
    )
    .use(
      visitorCounterController({
        visitors: deps.visitors,
        limiter: deps.limiter,
        enabled: deps.config.VISITOR_COUNTER_ENABLED,
        origins: deps.config.VISITOR_COUNTER_ORIGINS,
        trustProxy: deps.config.TRUST_PROXY,
        upgradeUrl: deps.config.UPGRADE_URL,
      }),
    );
}

/** The operator routes (ADMIN_TOKEN, ADMIN_TOKENS). */
function operatorControllers(deps: Deps, operators: Operators) {
  return new Elysia()
    .use(adminController({ accounts: deps.accounts, operators }))
    .use(discoveryAdminController({ discovery: deps.discovery, operators }))
    .use(analyticsAdminController({ usage: deps.store.usage, operators }))
    .use(correctionsAdminController({ corrections: deps.corrections, operators }));
}

export type App = ReturnType<typeof createApp>;
