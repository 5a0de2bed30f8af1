import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { loadPrerendered } from "../../src/assets/prerender";
import { renderRaster } from "../../src/assets/render";
import { AssetService } from "../../src/assets/service";
import { makeApp, type TestApp, tempDir } from "../support/app";
import { builtCatalog } from "../support/catalog";
import { isWebp, opaqueBox, pngSize, sha256 } from "./util";

/**
 * Marks too slow to render on demand are pre-rendered by scripts/prerender.ts and served by
 * downscaling that PNG. Here the threshold is lowered to 1 ms so a fast real mark qualifies.
 */
const dir = tempDir("prerender-");
const SLUG = "github";
let t: TestApp;
let renders = 0;

beforeAll(async () => {
  const full = builtCatalog();
  const one = { ...full, brands: full.brands.filter((b) => b.slug === SLUG) };
  writeFileSync(join(dir, "catalog.json"), JSON.stringify(one));
  // a real run of the script (2 renders of a real mark): slow on a loaded machine
  const run = Bun.spawn(
    [
      process.execPath,
      "scripts/prerender.ts",
      "--catalog",
      join(dir, "catalog.json"),
      "--threshold-ms",
      "1",
    ],
    { cwd: join(import.meta.dir, "../.."), stdout: "pipe", stderr: "inherit" },
  );
  const out = await new Response(run.stdout).text();
  expect(await run.exited).toBe(0);
  expect(out).toMatch(/new over 1 ms/);
  t = await makeApp(
    {},
    {
      customize: async (deps) => {
        await deps.assets.close();
        // a renderer that counts: pre-rendered marks must not reach it
        deps.assets = new AssetService(
          deps.catalog,
          {
            mode: "inline",
            render: async () => {
              renders++;
              throw new Error("not expected");
            },
            close: async () => {},
          },
          deps.assets.cache,
          loadPrerendered(join(dir, "prerender")),
        );
      },
    },
  );
}, 120_000);
afterAll(() => t.close());

describe("pre-rendered marks", () => {
  test("the script writes one 2048 px PNG per slow mark, named by the SVG's sha256", () => {
    const brand = t.deps.catalog.brand(SLUG);
    const mono = brand?.variants.mono?.svg ?? "";
    const file = join(dir, "prerender", `${sha256(mono)}.png`);
    expect(existsSync(file)).toBe(true);
    expect(pngSize(readFileSync(file))).toEqual({ width: 2048, height: 2048 });
    const manifest = JSON.parse(readFileSync(join(dir, "prerender", "manifest.json"), "utf8"));
    expect(manifest.marks[sha256(mono)].ms).toBeGreaterThan(1);
  });

  test("PNG and WebP of a pre-rendered mark come from the PNG, at the size asked, not rendered", async () => {
    const key = await t.key("pro");
    const png = await t.get(`/v1/png/${SLUG}?size=300`, key);
    expect(png.status).toBe(200);
    const bytes = new Uint8Array(await png.arrayBuffer());
    expect(pngSize(bytes)).toEqual({ width: 300, height: 300 });
    const webp = await t.get(`/v1/webp/${SLUG}?size=64&variant=mono`, key);
    expect(webp.status).toBe(200);
    const wb = new Uint8Array(await webp.arrayBuffer());
    expect(isWebp(wb)).toBe(true);
    expect((await sharp(wb).metadata()).width).toBe(64);
    expect(renders).toBe(0);
    // the artwork is there: some opaque pixels
    const { data } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    let opaque = 0;
    for (let i = 3; i < data.length; i += 4) if ((data[i] ?? 0) > 0) opaque++;
    expect(opaque).toBeGreaterThan(100);
  });

  test("a pre-rendered mark is laid out like a render: same safe area and size (+-2 px)", async () => {
    const key = await t.key("pro");
    const svg = t.deps.catalog.brand(SLUG)?.variants.mono?.svg ?? "";
    for (const query of ["size=200", "size=200&fit=contain&padding=0", "size=120&padding=20"]) {
      const res = await t.get(`/v1/png/${SLUG}?${query}`, key);
      const served = await opaqueBox(new Uint8Array(await res.arrayBuffer()));
      const q = new URLSearchParams(query);
      const rendered = await opaqueBox(
        await renderRaster(svg, Number(q.get("size")), "png", {
          fit: (q.get("fit") as "contain" | null) ?? "optical",
          padding: Number(q.get("padding") ?? 8),
        }),
      );
      for (const k of ["minX", "minY", "maxX", "maxY"] as const) {
        expect([query, k, Math.abs(served[k] - rendered[k]) <= 2]).toEqual([query, k, true]);
      }
    }
    expect(renders).toBe(0);
  });
});
