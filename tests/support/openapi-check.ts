import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { CONSOLE_PAGES } from "../../src/web";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = Record<string, any>;

/**
 * Paths the document leaves out on purpose, each with its reason; every other response is
 * checked. Add a route here only when it cannot be described in OpenAPI.
 */
export const UNDOCUMENTED: [RegExp, string][] = [
  [/^\/swagger(\/.*)?$/, "the API reference itself: the UI files and the document"],
  [
    new RegExp(
      `^(${CONSOLE_PAGES.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|")}|/console/.+)$`,
    ),
    "the web console's pages and bundles (HTML, JS, CSS for people, not API responses)",
  ],
];

interface Operation {
  label: string;
  responses: Json;
}

/**
 * Checks real responses against the app's own OpenAPI document (/swagger/json): the status
 * must be documented for the operation, the content type must be one the document lists for
 * it, and a JSON body must match the documented schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1
 * uses). A path no operation matches must be the documented 404 error body.
 */
/** What checking against one document needs: its ajv (schemas compiled once) and path matchers. */
interface Compiled {
  ajv: Ajv2020;
  validators: Map<string, ValidateFunction>;
  matchers: [RegExp, string, Json][];
}

/**
 * By the document's text: the many apps a run makes mostly serve the same document, and a new
 * ajv compiles its meta-schema and the components again (~100 ms per app).
 */
const byDocument = new Map<string, Compiled>();

function compiledFor(doc: Json): Compiled {
  const text = JSON.stringify(doc);
  let c = byDocument.get(text);
  if (!c) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: "doc:", components: doc.components ?? {} });
    const matchers = Object.entries(doc.paths as Json).map(
      ([path, item]): [RegExp, string, Json] => [
        new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
        path,
        item,
      ],
    );
    c = { ajv, validators: new Map(), matchers };
    byDocument.set(text, c);
  }
  return c;
}

export class OpenApiChecker {
  private readonly shared: Compiled;
  /** "method path status" of every response checked, for tests that cover every route */
  readonly seen = new Set<string>();

  constructor(readonly doc: Json) {
    this.shared = compiledFor(doc);
  }

  private operation(method: string, pathname: string): Operation | undefined {
    for (const [re, path, item] of this.shared.matchers) {
      const op = item[method.toLowerCase()];
      if (op && re.test(pathname)) return { label: `${method} ${path}`, responses: op.responses };
    }
    return undefined;
  }

  private validator(key: string, schema: Json): ValidateFunction {
    const { ajv, validators } = this.shared;
    let v = validators.get(key);
    if (!v) {
      // local $refs (#/components/schemas/X) point into the document registered as "doc:"
      const rebased = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"doc:#/components/'),
      );
      v = ajv.compile(rebased);
      validators.set(key, v);
    }
    return v;
  }

  /** The problems with one response ([] when it matches the document). Reads a clone. */
  async problems(request: Request, response: Response): Promise<string[]> {
    const { pathname } = new URL(request.url);
    const method = request.method;
    // preflights are answered by the CORS plugin (tests/http/cors.test.ts checks them)
    if (method === "OPTIONS" || method === "HEAD") return [];
    if (UNDOCUMENTED.some(([re]) => re.test(pathname))) return [];
    const op = this.operation(method, pathname);
    const status = String(response.status);
    const label = op?.label ?? `${method} ${pathname} (no documented route)`;
    const at = `${label} → ${status}`;
    if (!op) {
      if (status !== "404" && status !== "405") return [`${at}: undocumented route`];
      const body = (await response.clone().json()) as Json;
      return typeof body.error === "string" && typeof body.message === "string"
        ? []
        : [`${at}: not an {error, message} body`];
    }
    this.seen.add(`${op.label} ${status}`);
    const documented = op.responses[status] ?? op.responses.default;
    if (!documented) return [`${at}: status not documented (has ${Object.keys(op.responses)})`];
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
    const content = documented.content as Json | undefined;
    if (status === "304" || status === "204" || !content) {
      const text = await response.clone().text();
      return text === "" ? [] : [`${at}: a body where the document describes none`];
    }
    if (!(type in content)) return [`${at}: content-type ${type} not in ${Object.keys(content)}`];
    const schema = content[type]?.schema;
    if (type !== "application/json" || !schema) return [];
    const text = await response.clone().text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return [`${at}: body is not JSON: ${text.slice(0, 80)}`];
    }
    const validate = this.validator(`${op.label} ${status} ${type}`, schema);
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${at}: body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`,
    );
  }
}

/**
 * Wraps a fetch handler so that every response is checked against the app's /swagger/json;
 * a response that does not match throws, failing the test that received it.
 */
export function checkedHandler(
  handle: (request: Request) => Promise<Response>,
  onChecker?: (checker: OpenApiChecker) => void,
) {
  let checker: Promise<OpenApiChecker> | undefined;
  return async (request: Request): Promise<Response> => {
    checker ??= handle(new Request("http://localhost/swagger/json"))
      .then((r) => r.json())
      .then((doc) => {
        const c = new OpenApiChecker(doc as Json);
        onChecker?.(c);
        return c;
      });
    const c = await checker;
    const response = await handle(request);
    const problems = await c.problems(request, response);
    if (problems.length)
      throw new Error(`Response does not match the OpenAPI document:\n  ${problems.join("\n  ")}`);
    return response;
  };
}
