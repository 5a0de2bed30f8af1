/**
 * Pre-render the catalog's slow marks (run after the catalog build: `npm run prerender`).
 *
 *   bun scripts/prerender.ts [--catalog build/catalog.json] [--threshold-ms 500] [--only slug,slug]
 *
 * Every stored SVG (each distinct sha256 once) is timed at 256 px. Render time is a fixed part
 * plus a part proportional to the pixels, so a mark under threshold/64 ms at 256 px stays under
 * the threshold at 2048 px (64x the pixels); the others are rendered at 2048 px, and those
 * that take longer than the threshold are written to <catalog dir>/prerender/<sha256>.png with
 * a manifest. The service then downscales that PNG instead of rendering them (src/assets/
 * prerender.ts). Incremental: a mark already in the manifest with its file is not rendered
 * again; marks no longer in the catalog are dropped from it.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import {
  PRERENDER_MANIFEST,
  PRERENDER_SIZE,
  type PrerenderManifest,
} from "../src/assets/prerender";
import { createRenderer } from "../src/assets/render-pool";
import type { BuiltCatalog } from "../src/catalog/built-catalog";

const { values } = parseArgs({
  options: {
    catalog: { type: "string", default: process.env.CATALOG_FILE ?? "build/catalog.json" },
    "threshold-ms": { type: "string", default: "500" },
    only: { type: "string" },
  },
});
const catalogFile = String(values.catalog);
const threshold = Number(values["threshold-ms"]);
const only = values.only ? new Set(values.only.split(",")) : null;
const outDir = join(dirname(catalogFile), "prerender");
mkdirSync(outDir, { recursive: true });

const catalog = JSON.parse(readFileSync(catalogFile, "utf8")) as BuiltCatalog;
const marks = new Map<string, { svg: string; name: string }>();
for (const b of catalog.brands) {
  if (only && !only.has(b.slug)) continue;
  for (const [variant, stored] of Object.entries(b.variants)) {
    if (!stored) continue;
    const sha = createHash("sha256").update(new TextEncoder().encode(stored.svg)).digest("hex");
    if (!marks.has(sha)) marks.set(sha, { svg: stored.svg, name: `${b.slug}/${variant}` });
  }
}

const manifestPath = join(outDir, PRERENDER_MANIFEST);
const previous: PrerenderManifest = existsSync(manifestPath)
  ? (JSON.parse(readFileSync(manifestPath, "utf8")) as PrerenderManifest)
  : { size: PRERENDER_SIZE, thresholdMs: threshold, marks: {} };
const manifest: PrerenderManifest = { size: PRERENDER_SIZE, thresholdMs: threshold, marks: {} };
// with --only, the other marks of the previous manifest stay
if (only) Object.assign(manifest.marks, previous.marks);

const renderer = createRenderer({
  maxQueued: Number.POSITIVE_INFINITY,
  maxWaitMs: Number.POSITIVE_INFINITY,
  timeoutMs: 600_000,
});
const timed = async (svg: string, size: number) => {
  const t0 = performance.now();
  // the painted bounds edge to edge: the service lays the PNG out per request (fromPrerendered)
  const bytes = await renderer.render(svg, size, "png", { fit: "contain", padding: 0 });
  return { bytes, ms: performance.now() - t0 };
};

const started = performance.now();
let screened = 0;
let kept = 0;
const slow: string[] = [];
const entries = [...marks];
let next = 0;
const worker = async () => {
  while (next < entries.length) {
    const [sha, mark] = entries[next++] as [string, { svg: string; name: string }];
    const file = join(outDir, `${sha}.png`);
    const known = previous.marks[sha];
    if (known && existsSync(file)) {
      manifest.marks[sha] = known;
      kept++;
      continue;
    }
    screened++;
    const small = await timed(mark.svg, 256).catch(() => null);
    if (!small || small.ms * 64 <= threshold) continue;
    const full = await timed(mark.svg, PRERENDER_SIZE).catch(() => null);
    if (!full || full.ms <= threshold) continue;
    writeFileSync(file, full.bytes);
    manifest.marks[sha] = { ms: Math.round(full.ms) };
    slow.push(`${mark.name} ${Math.round(full.ms)} ms`);
  }
};
// one job in flight per render thread: the timings are of one render, not of a queue
await Promise.all(Array.from({ length: 2 }, worker));
await renderer.close();

for (const f of readdirSync(outDir))
  if (f.endsWith(".png") && !manifest.marks[f.slice(0, -4)]) unlinkSync(join(outDir, f));
writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 1)}\n`);
console.log(
  `prerender: ${marks.size} marks, ${screened} timed, ${kept} already pre-rendered, ${slow.length} new over ${threshold} ms at ${PRERENDER_SIZE} px (${Math.round((performance.now() - started) / 1000)} s)`,
);
for (const s of slow) console.log(`  ${s}`);
