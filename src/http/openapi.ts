import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type ElysiaSwaggerConfig, swagger } from "@elysiajs/swagger";
import { Elysia } from "elysia";

// biome-ignore lint/suspicious/noExplicitAny: a JSON document walked generically
type Json = Record<string, any>;

/** For responses that neither the route nor its schema describes (OpenAPI requires one). */
const STATUS_DESCRIPTIONS: Record<string, string> = {
  200: "OK",
  201: "Created",
  401: "Missing or invalid credentials (error names the code)",
  404: "Not found (error names what was not found)",
  413: "payload_too_large: the declared body is over 64 KiB",
  422: "The request was refused (error names the reason, e.g. validation_error)",
  429: "rate_limit_exceeded: a limit is reached",
  500: "internal_error: the request could not be served right now",
  503: "Service unavailable",
};

const errorResponse = (code: string, description: string) => ({
  description,
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["error", "message"],
        properties: { error: { const: code }, message: { type: "string" } },
      },
    },
  },
});
const INTERNAL_ERROR = errorResponse(
  "internal_error",
  "internal_error: an unexpected failure (the body names no internals)",
);
const URI_TOO_LONG = errorResponse(
  "uri_too_long",
  "uri_too_long: the URL (path and query) is over 8 KiB",
);
const HEADERS_TOO_LARGE = errorResponse(
  "headers_too_large",
  "headers_too_large: the request headers are over 16 KiB in all",
);

const STORAGE_UNAVAILABLE = {
  ...errorResponse(
    "storage_unavailable",
    "storage_unavailable: the service cannot store data right now (storage full or unavailable; with USAGE_ON_STORE_FULL=refuse, metered requests too); nothing was changed. Retry-After says when to retry",
  ),
  headers: { "Retry-After": { description: "Seconds to wait", schema: { type: "string" } } },
};

const RESPONSE_FIELDS = ["description", "headers", "content", "links"];

/**
 * Elysia's t.Integer (and t.Numeric) is anyOf [a string of that format, the number itself] so
 * that query strings coerce; a client only ever sends or receives the number.
 */
function numberBranch(node: Json): Json | null {
  const [str, num, more] = node.anyOf ?? [];
  const numberType = { integer: "integer", numeric: "number" }[str?.format as string];
  if (more || str?.type !== "string" || !numberType || num?.type !== numberType) return null;
  const { anyOf: _, ...outer } = node;
  return { ...outer, ...num };
}

/** Keys inside these are property names, not schema keywords. */
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions"]);

/**
 * Rebuilds a schema tree: integers as integers, without Elysia's custom `error` messages (not a
 * JSON Schema keyword) and without the `additionalProperties: false` that Elysia writes into a
 * route's schemas once it compiles them on the route's first request. The server ignores
 * unknown fields (normalize: "typebox"), so the document never says they are refused, and it
 * stays the same before and after traffic.
 */
function cleanSchemas(node: unknown, names = false): unknown {
  if (Array.isArray(node)) return node.map((v) => cleanSchemas(v));
  if (typeof node !== "object" || node === null) return node;
  const n = names ? (node as Json) : (numberBranch(node as Json) ?? (node as Json));
  const out: Json = {};
  for (const [k, v] of Object.entries(n)) {
    if (!names && k === "error" && typeof v !== "object") continue;
    if (!names && k === "additionalProperties" && v === false) continue;
    out[k] = cleanSchemas(v, !names && NAME_MAPS.has(k));
  }
  return out;
}

/** JSON routes document only application/json (the plugin adds form-data and text/plain). */
function jsonOnly(content: Json | undefined): Json | undefined {
  // image bodies a route documents beside JSON (pinned artwork) stay
  return content?.["application/json"]
    ? Object.fromEntries(
        Object.entries(content).filter(([k]) => k === "application/json" || k.startsWith("image/")),
      )
    : content;
}

/**
 * Corrects what @elysiajs/swagger generates so the document is valid OpenAPI 3.1: no trailing
 * slash on prefix routes, defaulted parameters optional, integers as integers, a description on
 * every response, JSON-only media types on JSON routes, no stray schema keys on responses, no
 * Elysia-only schema keywords, and the same bytes however much traffic the routes have seen.
 */
export function normalizeOpenApi(raw: unknown): Json {
  // cleanSchemas rebuilds every object and array: the plugin's document is never mutated
  const doc = cleanSchemas(raw) as Json;
  const paths: Json = {};
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    const key = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    paths[key] = { ...paths[key], ...item };
    for (const op of Object.values(item as Json) as Json[]) {
      for (const p of op.parameters ?? []) {
        if (p.schema?.default !== undefined) p.required = false;
        if (Array.isArray(p.examples)) {
          p.schema = { ...p.schema, examples: p.examples };
          delete p.examples;
        }
      }
      if (op.requestBody) op.requestBody.content = jsonOnly(op.requestBody.content);
      // any route can fail unexpectedly (500 internal_error), and refuses an over-long URL or
      // header section before routing (src/http/request-limits.ts)
      op.responses = {
        ...op.responses,
        414: op.responses?.[414] ?? URI_TOO_LONG,
        431: op.responses?.[431] ?? HEADERS_TOO_LARGE,
        500: op.responses?.[500] ?? INTERNAL_ERROR,
        503: op.responses?.[503] ?? STORAGE_UNAVAILABLE,
      };
      for (const [status, res] of Object.entries((op.responses ?? {}) as Json)) {
        const kept = Object.fromEntries(
          Object.entries(res).filter(([k]) => RESPONSE_FIELDS.includes(k) || k.startsWith("x-")),
        );
        op.responses[status] = {
          ...kept,
          description: res.description ?? STATUS_DESCRIPTIONS[status] ?? "Response",
          ...(res.content ? { content: jsonOnly(res.content) } : {}),
        };
      }
    }
  }
  return { ...doc, paths };
}

const UI_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const UI_FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

/** The reference page: Swagger UI from the swagger-ui-dist package, nothing from the network. */
function uiPage(title: string, base: string): string {
  const esc = title.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc}</title>
<link rel="icon" type="image/png" href="${base}/favicon-32x32.png">
<link rel="stylesheet" href="${base}/swagger-ui.css">
<link rel="stylesheet" href="${base}/reference.css">
</head>
<body>
<nav class="reference-bar" aria-label="Reference"><a href="/">&larr; Back to the console</a><span id="reference-scope"></span></nav>
<div id="swagger-ui"></div>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/init.js"></script>
</body>
</html>
`;
}

/** Tags of routes kept out of the public reference (shown with ?all): operator, MCP, Stripe. */
export const NON_PUBLIC_TAGS = ["admin", "mcp"];
export const NON_PUBLIC_PATHS = ["/v1/billing/webhook"];

/**
 * The page's script: loads the full document and, unless the address has `?all`, shows only
 * the public routes (operator, MCP and webhook routes left out; the document itself is
 * unchanged), grouped by task in the order of its `tags`.
 */
const uiInit = (specPath: string) => `(async () => {
  const all = new URLSearchParams(location.search).has("all");
  const spec = await (await fetch(${JSON.stringify(specPath)})).json();
  const hiddenTags = ${JSON.stringify(NON_PUBLIC_TAGS)};
  const hiddenPaths = ${JSON.stringify(NON_PUBLIC_PATHS)};
  if (!all) {
    for (const [path, item] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(item))
        if (hiddenPaths.includes(path) || (op.tags || []).some((t) => hiddenTags.includes(t)))
          delete item[method];
      if (!Object.keys(item).length) delete spec.paths[path];
    }
    spec.tags = (spec.tags || []).filter((t) => !hiddenTags.includes(t.name));
  }
  const scope = document.getElementById("reference-scope");
  const a = document.createElement("a");
  a.href = all ? location.pathname : "?all";
  a.textContent = all ? "Public routes only" : "Show operator, MCP and webhook routes";
  scope.append(a);
  window.ui = SwaggerUIBundle({ spec, dom_id: "#swagger-ui", deepLinking: true });
})();
`;

/** Dark mode following the system, and the bar with the link back to the console. */
const REFERENCE_CSS = `.reference-bar { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 0.5rem 1rem; padding: 0.6rem 1rem; font: 600 0.95rem system-ui, sans-serif; border-bottom: 1px solid #d9dce3; }
.reference-bar a { color: #4338ca; text-decoration: none; }
.reference-bar a:hover { text-decoration: underline; }
@media (prefers-color-scheme: dark) {
  html { background: #14161a; color-scheme: dark; }
  .reference-bar { border-color: #2f343d; }
  .reference-bar a { color: #a5b4fc; }
  .swagger-ui { filter: invert(88%) hue-rotate(180deg); }
  .swagger-ui .microlight, .swagger-ui img { filter: invert(100%) hue-rotate(180deg); }
}
`;

/**
 * The API reference: Swagger UI served from the swagger-ui-dist npm package (its version pinned
 * by the lockfile) at `path` and `path/`, and the OpenAPI document at `path/json`, generated by
 * @elysiajs/swagger and passed through normalizeOpenApi.
 */
export function openApiDocs(config: ElysiaSwaggerConfig) {
  const path = config.path ?? "/swagger";
  const specPath = config.specPath ?? `${path}/json`;
  const title = config.documentation?.info?.title ?? "API reference";
  const files = new Map<string, { body: BodyInit; type: string }>();
  const file = (name: string) => {
    let f = files.get(name);
    if (!f) {
      const type = UI_FILES[name];
      if (!type) return undefined;
      f = { body: readFileSync(join(UI_DIR, name)) as unknown as BodyInit, type };
      files.set(name, f);
    }
    return f;
  };
  files.set("init.js", { body: uiInit(specPath), type: "text/javascript; charset=utf-8" });
  files.set("reference.css", { body: REFERENCE_CSS, type: "text/css; charset=utf-8" });
  const html = uiPage(title, path);
  const hide = { detail: { hide: true } };
  return (
    new Elysia({ name: "openapi-docs" })
      // the plugin's own page (Scalar from a CDN) is replaced by the local Swagger UI
      .onAfterHandle(({ route, response }) => {
        if (route === path)
          return new Response(html, {
            headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" },
          });
        if (route !== specPath) return undefined;
        return normalizeOpenApi(response);
      })
      .use(
        swagger({
          ...config,
          path,
          specPath,
          // relative: "Try it out" calls the server that served the page, wherever it runs
          documentation: {
            servers: [{ url: "/", description: "The server that serves this document" }],
            ...config.documentation,
          },
        }),
      )
      .get(
        `${path}/:file`,
        ({ params, set }) => {
          const f = file(params.file);
          if (!f) {
            set.status = 404;
            return { error: "not_found", message: `No file ${path}/${params.file}` };
          }
          return new Response(f.body, {
            headers: { "content-type": f.type, "cache-control": "public, max-age=3600" },
          });
        },
        hide,
      )
  );
}
