import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Elysia } from "elysia";
import { notFound, unavailable } from "../platform/domain-errors";

/**
 * Where scripts/build-web.ts writes the console: build/web under the working directory, like
 * the catalog's default CATALOG_FILE (the same from src/, a dist/ bundle, Bun or Deno).
 */
export const WEB_DIR = resolve("build/web");

/** Client-side routes of the console: each answers the same index.html. */
export const CONSOLE_PAGES = [
  "/",
  "/signup",
  "/login",
  "/verify-email",
  "/reset-password",
  "/forgot-password",
  "/account",
  "/dashboard",
] as const;

/** Only this origin: scripts, styles, fetch; images also from blob: (object URLs of assets). */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; " +
  "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; " +
  "form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  html: "text/html; charset=utf-8",
  svg: "image/svg+xml",
};

interface File {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

function load(dir: string): Map<string, File> | null {
  if (!existsSync(join(dir, "index.html"))) return null;
  const files = new Map<string, File>();
  for (const name of readdirSync(dir)) {
    const ext = name.slice(name.lastIndexOf(".") + 1);
    const type = TYPES[ext];
    if (!type) continue;
    const body = new Uint8Array(readFileSync(join(dir, name)));
    const etag = `"${createHash("sha256").update(body).digest("hex").slice(0, 32)}"`;
    files.set(name, { body, type, etag });
  }
  return files;
}

/**
 * The web console: the page routes (CONSOLE_PAGES, all the same index.html) and its hashed
 * bundles under /console/. Nothing else, so /v1, /auth and the rest keep their JSON 404.
 */
export function webController(dir: string = WEB_DIR) {
  let files: Map<string, File> | null = null;
  const get = () => {
    files ??= load(dir);
    if (!files)
      throw unavailable(
        "console_not_built",
        "The web console is not built; run `bun scripts/build-web.ts`.",
      );
    return files;
  };

  const send = (file: File, request: Request, cache: string) => {
    const headers = {
      "content-type": file.type,
      "cache-control": cache,
      etag: file.etag,
      "content-security-policy": CONSOLE_CSP,
      "x-frame-options": "DENY",
    };
    if (request.headers.get("if-none-match") === file.etag)
      return new Response(null, { status: 304, headers });
    return new Response(file.body, { headers });
  };

  const app = new Elysia({ name: "web-console" }).get(
    "/console/:file",
    ({ params, request }) => {
      const file = get().get(params.file);
      if (!file || params.file === "index.html")
        throw notFound("not_found", `No route for GET /console/${params.file}`);
      // hashed bundles never change; the favicon keeps its name, so it is kept a day only
      const hashed = /-[a-z0-9]{8}\.(js|css)$/.test(params.file);
      return send(
        file,
        request,
        hashed ? "public, max-age=31536000, immutable" : "public, max-age=86400",
      );
    },
    { detail: { hide: true } },
  );
  for (const path of CONSOLE_PAGES)
    app.get(path, ({ request }) => send(get().get("index.html") as File, request, "no-cache"), {
      detail: { hide: true },
    });
  return app;
}
