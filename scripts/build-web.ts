/**
 * Builds the web console (src/web/main.tsx: Preact + uPlot, bundled from node_modules) into
 * build/web/: index.html, app-<hash>.js, app-<hash>.css. No CDN: everything the pages load
 * comes from this folder, served by src/web/index.ts.
 *
 *   bun scripts/build-web.ts             build
 *   bun scripts/build-web.ts --if-stale  do nothing when build/web is newer than every input
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SRC = join(ROOT, "src", "web");
export const WEB_OUT = join(ROOT, "build", "web");

function newestInput(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(SRC);
  for (const f of ["package-lock.json", "scripts/build-web.ts"]) {
    const p = join(ROOT, f);
    if (existsSync(p)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

export function isStale(): boolean {
  const index = join(WEB_OUT, "index.html");
  return !existsSync(index) || statSync(index).mtimeMs < newestInput();
}

const page = (js: string, css: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Brand Asset API console</title>
<link rel="icon" href="/console/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/${css}">
<script type="module" src="/console/${js}"></script>
</head>
<body>
<div id="app"><noscript>The console needs JavaScript. The API itself is documented at <a href="/swagger">/swagger</a>.</noscript></div>
</body>
</html>
`;

const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#4338ca"/><path d="M10 7h8a5 5 0 0 1 2.6 9.3A5.5 5.5 0 0 1 18.5 25H10zm4 4v4h4a2 2 0 0 0 0-4zm0 7.5V21h4.5a1.75 1.75 0 0 0 0-3.5z" fill="#fff"/></svg>\n';

/** Bundles into a temp folder, then swaps it in, so a server never sees half a build. */
export async function buildWeb(): Promise<string[]> {
  const tmp = `${WEB_OUT}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const result = await Bun.build({
    entrypoints: [join(SRC, "main.tsx")],
    outdir: tmp,
    target: "browser",
    minify: true,
    naming: "[name]-[hash].[ext]",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) {
    for (const m of result.logs) console.error(m);
    throw new Error("web console build failed");
  }
  const names = result.outputs.map((o) => o.path.slice(tmp.length + 1));
  const js = names.find((n) => n.endsWith(".js"));
  const css = names.find((n) => n.endsWith(".css"));
  if (!js || !css) throw new Error(`web console build: missing outputs (${names.join(", ")})`);
  writeFileSync(join(tmp, "index.html"), page(js, css));
  writeFileSync(join(tmp, "favicon.svg"), FAVICON);
  mkdirSync(join(ROOT, "build"), { recursive: true });
  const old = `${WEB_OUT}.old-${process.pid}`;
  if (existsSync(WEB_OUT)) renameSync(WEB_OUT, old);
  renameSync(tmp, WEB_OUT);
  rmSync(old, { recursive: true, force: true });
  return [...names, "index.html", "favicon.svg"];
}

if (import.meta.main) {
  if (process.argv.includes("--if-stale") && !isStale()) process.exit(0);
  const started = performance.now();
  const files = await buildWeb();
  console.error(`[web] built ${files.join(", ")} (${Math.round(performance.now() - started)} ms)`);
}
