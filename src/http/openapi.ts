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

function collapseNumbers(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(collapseNumbers);
  if (typeof node !== "object" || node === null) return node;
  const n = numberBranch(node as Json) ?? (node as Json);
  return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, collapseNumbers(v)]));
}

/** JSON routes document only application/json (the plugin adds form-data and text/plain). */
function jsonOnly(content: Json | undefined): Json | undefined {
  return content?.["application/json"]
    ? { "application/json": content["application/json"] }
    : content;
}

/**
 * Corrects what @elysiajs/swagger generates so the document is valid OpenAPI 3.1: no trailing
 * slash on prefix routes, defaulted parameters optional, integers as integers, a description on
 * every response, JSON-only media types on JSON routes, no stray schema keys on responses.
 */
export function normalizeOpenApi(raw: unknown): Json {
  // collapseNumbers rebuilds every object and array: the plugin's document is never mutated
  const doc = collapseNumbers(raw) as Json;
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

/** The swagger plugin (UI and JSON document) with the document passed through normalizeOpenApi. */
export function openApiDocs(config: ElysiaSwaggerConfig) {
  const specPath = config.specPath ?? `${config.path ?? "/swagger"}/json`;
  return new Elysia()
    .onAfterHandle(({ route, response }) =>
      route === specPath ? normalizeOpenApi(response) : undefined,
    )
    .use(swagger(config));
}
