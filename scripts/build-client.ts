/**
 * Builds the typed client (packages/client): `src/routes.ts` generated from the app's own
 * OpenAPI document (itself generated from the routes' TypeBox schemas), then `dist/index.js`
 * (ESM, bundled, no dependencies) and `dist/*.d.ts`.
 * tests/client/client.test.ts fails when routes.ts is stale.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { buildDeps, openEmbeddedStore } from "../src/deps";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = Record<string, any>;

const ROOT = join(import.meta.dir, "..");
const PKG = join(ROOT, "packages/client");
const ROUTES_FILE = join(PKG, "src/routes.ts");

/** The app's OpenAPI document, from a throw-away instance over an empty data directory. */
export async function openApiDocument(): Promise<Json> {
  const dataDir = mkdtempSync(join(tmpdir(), "bapi-client-"));
  const config = loadConfig({
    DATA_DIR: dataDir,
    CATALOG_FILE: process.env.CATALOG_FILE ?? join(ROOT, "build/catalog.json"),
    LOG_LEVEL: "error",
    LOG_REQUESTS: "off",
  });
  const deps = await buildDeps(config, openEmbeddedStore(config));
  try {
    const res = await createApp(deps).handle(new Request("http://localhost/swagger/json"));
    return (await res.json()) as Json;
  } finally {
    await deps.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const key = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));

/** A TypeScript type for a JSON Schema (the subset TypeBox emits). */
export function tsType(s: Json | undefined, indent = ""): string {
  if (!s || Object.keys(s).length === 0) return "unknown";
  const doc = (d: unknown) =>
    typeof d === "string" ? `${indent}  /** ${d.replaceAll("*/", "* /")} */\n` : "";
  const union = (xs: Json[]) => [...new Set(xs.map((x) => tsType(x, indent)))].join(" | ");
  if (s.anyOf) return union(s.anyOf);
  if (s.oneOf) return union(s.oneOf);
  if ("const" in s) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v: unknown) => JSON.stringify(v)).join(" | ");
  if (Array.isArray(s.type)) return union(s.type.map((type: string) => ({ ...s, type })));
  switch (s.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = tsType(s.items, indent);
      return /[ |&]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    case "object": {
      const required = new Set<string>(s.required ?? []);
      const lines = Object.entries((s.properties ?? {}) as Record<string, Json>).map(
        ([k, v]) =>
          `${doc(v.description)}${indent}  ${key(k)}${required.has(k) ? "" : "?"}: ${tsType(v, `${indent}  `)};`,
      );
      const extra = s.patternProperties
        ? Object.values(s.patternProperties as Record<string, Json>)[0]
        : typeof s.additionalProperties === "object"
          ? s.additionalProperties
          : null;
      if (extra) lines.push(`${indent}  [key: string]: ${tsType(extra, `${indent}  `)};`);
      else if (s.additionalProperties === true || !s.properties)
        lines.push(`${indent}  [key: string]: unknown;`);
      return `{\n${lines.join("\n")}\n${indent}}`;
    }
  }
  return "unknown";
}

function paramsType(op: Json, where: "path" | "query", indent: string): string {
  const ps = ((op.parameters ?? []) as Json[]).filter((p) => p.in === where);
  if (!ps.length) return "Record<string, never>";
  return tsType(
    {
      type: "object",
      required: ps.filter((p) => p.required).map((p) => p.name),
      properties: Object.fromEntries(
        ps.map((p) => [
          p.name,
          { ...p.schema, description: p.description ?? p.schema?.description },
        ]),
      ),
    },
    indent,
  );
}

function responseType(op: Json, indent: string): string {
  const [status, res] =
    Object.entries(op.responses as Record<string, Json>).find(([code]) => code.startsWith("2")) ??
    [];
  if (!status || status === "204") return "void";
  const content = (res?.content ?? {}) as Record<string, Json>;
  if (content["application/json"]) return tsType(content["application/json"].schema, indent);
  if (content["image/svg+xml"]) return "string";
  return "Uint8Array";
}

/** routes.ts: one entry per /v1 operation, keyed "METHOD /path/{param}". */
export function routesSource(doc: Json): string {
  const entries: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    if (!path.startsWith("/v1/")) continue;
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      const body = op.requestBody?.content?.["application/json"]?.schema;
      const i = "    ";
      entries.push(
        [
          `  /** ${(op.summary ?? "").replaceAll("*/", "* /")} */`,
          `  ${JSON.stringify(`${method.toUpperCase()} ${path}`)}: {`,
          `    path: ${paramsType(op, "path", i)};`,
          `    query: ${paramsType(op, "query", i)};`,
          `    body: ${body ? tsType(body, i) : "undefined"};`,
          `    response: ${responseType(op, i)};`,
          "  };",
        ].join("\n"),
      );
    }
  }
  return `// Generated by scripts/build-client.ts from the app's OpenAPI document. Do not edit.

/** Every /v1 operation: its path and query parameters, JSON body and success answer. */
export interface Routes {
${entries.join("\n")}
}
`;
}

if (import.meta.main) {
  writeFileSync(ROUTES_FILE, routesSource(await openApiDocument()));
  const run = (cmd: string[]) => {
    const r = Bun.spawnSync(cmd, { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
    if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed`);
  };
  run(["biome", "format", "--write", ROUTES_FILE]);
  rmSync(join(PKG, "dist"), { recursive: true, force: true });
  run([
    process.execPath,
    "build",
    join(PKG, "src/index.ts"),
    "--outdir",
    join(PKG, "dist"),
    "--target",
    "browser",
    "--format",
    "esm",
  ]);
  run(["tsc", "-p", join(PKG, "tsconfig.json")]);
  console.log("packages/client: src/routes.ts, dist/index.js, dist/*.d.ts");
}
