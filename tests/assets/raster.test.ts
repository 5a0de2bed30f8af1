import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import type { Renderer } from "../../src/assets/render-pool";
import { type Brand, VARIANTS, type Variant } from "../../src/catalog/built-catalog";
import { makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";
import {
  findBrand,
  has,
  isWebp,
  opaqueBox,
  PNG_SIGNATURE,
  pngSize,
  sha256,
  viewBoxAspect,
} from "./util";

let t: TestApp;
let free: string;
let pro: string;
let brand: Brand; // mono + color
let wide: Brand; // a wordmark at least 2.5x wider than tall
let tall: Brand; // has a mark taller than wide
let tallVariant: Variant;
beforeAll(async () => {
  t = await makeApp();
  free = await t.key("free");
  pro = await t.key("pro");
  // a simple-icons mono mark (the build also derives mono marks for iconify-only brands)
  brand = findBrand(
    t,
    (b) => has(b, "mono", "color") && b.variants.mono?.source === "simple-icons",
    "a simple-icons mono and color",
  );
  wide = findBrand(
    t,
    (b) => has(b, "wordmark") && viewBoxAspect(b.variants.wordmark!.svg) >= 2.5,
    "a wide wordmark",
  );
  const isTall = (b: Brand, v: Variant) =>
    !!b.variants[v] && viewBoxAspect(b.variants[v].svg) <= 0.7;
  tall = findBrand(t, (b) => VARIANTS.some((v) => isTall(b, v)), "a tall mark");
  tallVariant = VARIANTS.find((v) => isTall(tall, v))!;
});
afterAll(() => t.close());

async function get(path: string, key = pro, headers: Record<string, string> = {}) {
  const res = await t.get(path, key, headers);
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe("GET /v1/png/{slug}", () => {
  test("default: 256 x 256 PNG of the mono mark with the artwork headers", async () => {
    const { res, bytes } = await get(`/v1/png/${brand.slug}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(pngSize(bytes)).toEqual({ width: 256, height: 256 });
    expect(res.headers.get("x-svg-variant")).toBe("mono");
    expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const monoHash = sha256(brand.variants.mono!.svg);
    expect(res.headers.get("etag")).toBe(`"${monoHash.slice(0, 40)}-256-png-optical-p8-r2"`);
  });

  test("size is the box: every size gives exactly size x size", async () => {
    for (const size of [16, 64, 300, 1024]) {
      const { res, bytes } = await get(`/v1/png/${brand.slug}?size=${size}&variant=color`);
      expect(res.status).toBe(200);
      expect(pngSize(bytes)).toEqual({ width: size, height: size });
      expect(res.headers.get("x-svg-variant")).toBe("color");
    }
  });

  test("fit=contain&padding=0: a wide mark fills the width, centered vertically", async () => {
    const { res, bytes } = await get(
      `/v1/png/${wide.slug}?variant=wordmark&size=200&fit=contain&padding=0`,
    );
    expect(res.headers.get("x-svg-variant")).toBe("wordmark");
    const box = await opaqueBox(bytes);
    expect(box.width).toBe(200);
    expect(box.height).toBe(200);
    // the painted bounds span the whole width (anti-aliased edges: +-1 px) ...
    expect(box.minX).toBeLessThanOrEqual(1);
    expect(box.maxX).toBeGreaterThanOrEqual(198);
    // ... and leave transparent bands above and below, of equal height (+-2 px)
    expect(box.minY).toBeGreaterThan(0);
    expect(box.maxY).toBeLessThan(199);
    expect(Math.abs(box.minY - (199 - box.maxY))).toBeLessThanOrEqual(2);
  });

  test("default layout: the mark stays inside the 8% safe area on every side", async () => {
    for (const [b, variant] of [
      [wide, "wordmark"],
      [brand, "color"],
      [tall, tallVariant],
    ] as const) {
      const { bytes } = await get(`/v1/png/${b.slug}?variant=${variant}&size=200`);
      const box = await opaqueBox(bytes);
      expect([b.slug, box.minX >= 15, box.minY >= 15, box.maxX <= 184, box.maxY <= 184]).toEqual([
        b.slug,
        true,
        true,
        true,
        true,
      ]);
    }
    // a wide wordmark is capped by the safe area's width: 168 px of 200
    const { bytes } = await get(`/v1/png/${wide.slug}?variant=wordmark&size=200`);
    const box = await opaqueBox(bytes);
    expect(box.maxX - box.minX + 1).toBeGreaterThanOrEqual(166);
  });

  test("a tall mark with fit=contain&padding=0 fills the height, centered horizontally", async () => {
    const { res, bytes } = await get(
      `/v1/png/${tall.slug}?size=120&variant=${tallVariant}&fit=contain&padding=0`,
    );
    expect(res.headers.get("x-svg-variant")).toBe(tallVariant);
    const box = await opaqueBox(bytes);
    expect(box.minY).toBeLessThanOrEqual(1);
    expect(box.maxY).toBeGreaterThanOrEqual(118);
    expect(box.minX).toBeGreaterThan(0);
    expect(box.maxX).toBeLessThan(119);
  });

  test("fit and padding are part of the ETag; bad values are 422 naming the parameter", async () => {
    const a = await get(`/v1/png/${brand.slug}?size=64&fit=contain&padding=0`);
    const b = await get(`/v1/png/${brand.slug}?size=64&fit=optical&padding=20`);
    expect(a.res.headers.get("etag")).toContain("-64-png-contain-p0-r");
    expect(b.res.headers.get("etag")).toContain("-64-png-optical-p20-r");
    for (const [query, name] of [
      ["fit=cover", "fit"],
      ["fit=", "fit"],
      ["padding=41", "padding"],
      ["padding=-1", "padding"],
      ["padding=5.5", "padding"],
    ]) {
      const res = await t.get(`/v1/png/${brand.slug}?${query}`, pro);
      expect([query, res.status]).toEqual([query, 422]);
      const body = await res.json();
      expect(body.error).toBe("validation_error");
      expect(body.message).toContain(name);
    }
  });

  test("size out of range or not an integer: 422 validation_error naming size", async () => {
    for (const size of ["15", "2049", "0", "-1", "abc", "25.5", ""]) {
      const res = await t.get(`/v1/png/${brand.slug}?size=${size}`, pro);
      expect(res.status).toBe(422);
      const body = await res.json();
      expect(body.error).toBe("validation_error");
      expect(body.message).toContain("size");
      expect(body.message).toContain("16 to 2048");
    }
  });

  test("size bounds 16 and 2048 are accepted", async () => {
    const small = await get(`/v1/png/${brand.slug}?size=16`);
    expect(pngSize(small.bytes)).toEqual({ width: 16, height: 16 });
    const large = await get(`/v1/png/${brand.slug}?size=2048`);
    expect(pngSize(large.bytes)).toEqual({ width: 2048, height: 2048 });
  });

  test("unknown slug 404, unknown variant 422, no key 401", async () => {
    await expectError(await t.get("/v1/png/no-such-brand-xyz", pro), 404, "service_not_found");
    const bad = await t.get(`/v1/png/${brand.slug}?variant=sepia`, pro);
    expect(bad.status).toBe(422);
    expect((await bad.json()).message).toContain("variant");
    await expectError(await t.req(`/v1/png/${brand.slug}`), 401, "invalid_api_key");
  });

  test("free keys get mono with X-Variant-Restricted", async () => {
    const asked = await get(`/v1/png/${brand.slug}?variant=color&size=64`, free);
    const mono = await get(`/v1/png/${brand.slug}?variant=mono&size=64`, free);
    expect(asked.res.headers.get("x-svg-variant")).toBe("mono");
    expect(asked.res.headers.get("x-variant-restricted")).toBe("color");
    expect(asked.bytes).toEqual(mono.bytes);
    expect(mono.res.headers.get("x-variant-restricted")).toBeNull();
  });

  test("If-None-Match with the current ETag: 304 with no body; another size: 200", async () => {
    const first = await get(`/v1/png/${brand.slug}?size=96`);
    const etag = first.res.headers.get("etag")!;
    const again = await get(`/v1/png/${brand.slug}?size=96`, pro, { "if-none-match": etag });
    expect(again.res.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    expect(again.res.headers.get("etag")).toBe(etag);
    const other = await get(`/v1/png/${brand.slug}?size=97`, pro, { "if-none-match": etag });
    expect(other.res.status).toBe(200);
    expect(other.res.headers.get("etag")).not.toBe(etag);
  });

  test("the placeholder is rendered the same way", async () => {
    const b = findBrand(t, (x) => x.id > 200 && has(x, "mono"), "id > 200");
    t.deps.catalog.update({ ...b, variants: {} });
    const { res, bytes } = await get(`/v1/png/${b.slug}?size=48`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-svg-variant")).toBe("placeholder");
    expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(pngSize(bytes)).toEqual({ width: 48, height: 48 });
    const box = await opaqueBox(bytes);
    expect(box.maxX).toBeGreaterThan(box.minX);
  });
});

describe("artwork that fails to render", () => {
  test("is replaced by the rendered placeholder (200, placeholder headers), never a 500", async () => {
    const b = findBrand(t, (x) => x.id > 300 && has(x, "mono"), "id > 300");
    const broken = { svg: "<svg><g></svg", sha256: sha256("<svg><g></svg"), source: "test" };
    t.deps.catalog.update({ ...b, variants: { mono: broken } });
    for (const format of ["png", "webp"] as const) {
      const { res, bytes } = await get(`/v1/${format}/${b.slug}?size=40`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-svg-variant")).toBe("placeholder");
      expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
      expect(res.headers.get("etag")).toContain(`-40-${format}-`);
      expect((await sharp(bytes).metadata()).width).toBe(40);
      // the placeholder's ETag is current from then on: a revalidation is a 304
      const etag = res.headers.get("etag") ?? "";
      const { res: again } = await get(`/v1/${format}/${b.slug}?size=40`, pro, {
        "if-none-match": etag,
      });
      expect(again.status).toBe(304);
      expect(again.headers.get("x-svg-variant")).toBe("placeholder");
    }
  });

  test("is not rendered again on every request", async () => {
    const b = findBrand(t, (x) => x.id > 400 && has(x, "mono"), "id > 400");
    const svg = "<svg><g></svg ";
    t.deps.catalog.update({
      ...b,
      variants: { mono: { svg, sha256: sha256(svg), source: "test" } },
    });
    const renderer = (t.deps.assets as unknown as { renderer: Renderer }).renderer;
    const original = renderer.render;
    let calls = 0;
    renderer.render = (...args) => {
      calls++;
      return original.apply(renderer, args);
    };
    try {
      for (let i = 0; i < 3; i++) {
        const { res } = await get(`/v1/png/${b.slug}?size=41`);
        expect(res.headers.get("x-svg-variant")).toBe("placeholder");
      }
    } finally {
      renderer.render = original;
    }
    // the artwork once, the placeholder once
    expect(calls).toBe(2);
  });
});

describe("GET /v1/webp/{slug}", () => {
  test("lossless WebP of the same render, size x size with alpha", async () => {
    const { res, bytes } = await get(`/v1/webp/${brand.slug}?variant=color&size=128`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/webp");
    expect(isWebp(bytes)).toBe(true);
    const meta = await sharp(bytes).metadata();
    expect(meta.format).toBe("webp");
    expect([meta.width, meta.height]).toEqual([128, 128]);
    expect(meta.hasAlpha).toBe(true);
    expect(res.headers.get("x-svg-variant")).toBe("color");
    expect(res.headers.get("etag")).toContain("-128-webp-");
    // lossless: the decoded pixels equal the PNG's
    const png = await get(`/v1/png/${brand.slug}?variant=color&size=128`);
    const a = await sharp(bytes).raw().toBuffer();
    const b = await sharp(png.bytes).raw().toBuffer();
    expect(a.equals(b)).toBe(true);
  });

  test("decodes to exactly the PNG's pixels, semi-transparent edges included", async () => {
    const colorful = t.deps.catalog
      .all()
      .filter((b) => has(b, "color"))
      .slice(0, 12);
    expect(colorful).toHaveLength(12);
    let edgePixels = 0;
    for (const b of colorful) {
      const webp = await get(`/v1/webp/${b.slug}?variant=color&size=96`);
      const png = await get(`/v1/png/${b.slug}?variant=color&size=96`);
      const a = await sharp(webp.bytes).ensureAlpha().raw().toBuffer();
      const p = await sharp(png.bytes).ensureAlpha().raw().toBuffer();
      for (let i = 3; i < p.length; i += 4) if (p[i]! > 0 && p[i]! < 255) edgePixels++;
      expect({ slug: b.slug, equal: a.equals(p) }).toEqual({ slug: b.slug, equal: true });
    }
    expect(edgePixels).toBeGreaterThan(100); // anti-aliased edges were part of the comparison
  });

  test("same validation and tier rules as PNG", async () => {
    await expectError(
      await t.get(`/v1/webp/${brand.slug}?size=4096`, pro),
      422,
      "validation_error",
    );
    await expectError(await t.get("/v1/webp/no-such-brand-xyz", pro), 404, "service_not_found");
    const r = await t.get(`/v1/webp/${brand.slug}?variant=icon&size=32`, free);
    expect(r.headers.get("x-svg-variant")).toBe("mono");
    expect(r.headers.get("x-variant-restricted")).toBe("icon");
  });
});

describe("render cache and buckets", () => {
  test("a repeated render comes from the cache with identical bytes", async () => {
    const before = t.deps.assets.cache.stats();
    const a = await get(`/v1/png/${brand.slug}?size=77`);
    const b = await get(`/v1/png/${brand.slug}?size=77`);
    const after = t.deps.assets.cache.stats();
    expect(b.bytes).toEqual(a.bytes);
    expect(after.misses - before.misses).toBe(1);
    expect(after.hits - before.hits).toBe(1);
  });

  test("concurrent identical requests share one render", async () => {
    const before = t.deps.assets.cache.stats();
    const all = await Promise.all(
      Array.from({ length: 6 }, () => get(`/v1/webp/${brand.slug}?size=133`)),
    );
    const after = t.deps.assets.cache.stats();
    expect(after.misses - before.misses).toBe(1);
    expect(after.coalesced - before.coalesced).toBe(5);
    for (const r of all) expect(r.bytes).toEqual(all[0]!.bytes);
  });

  test("png and webp count against their own buckets", async () => {
    const key = await t.key("free");
    const png = await t.get(`/v1/png/${brand.slug}?size=32`, key);
    expect(png.headers.get("x-ratelimit-limit")).toBe("50");
    await t.get(`/v1/webp/${brand.slug}?size=32`, key);
    await t.get(`/v1/webp/${brand.slug}?size=32`, key);
    const usage = await (await t.get("/v1/usage", key)).json();
    expect(usage.endpoints.png.used).toBe(1);
    expect(usage.endpoints.webp.used).toBe(2);
    expect(usage.endpoints.svg.used).toBe(0);
  });
});

describe("RENDER_CACHE_MB", () => {
  test("bounds the render cache in bytes", async () => {
    const small = await makeApp({ RENDER_CACHE_MB: "1" });
    try {
      const key = await small.key("internal");
      expect(small.deps.assets.cache.maxBytes).toBe(1024 * 1024);
      const colorful = small.deps.catalog
        .all()
        .filter((b) => has(b, "color"))
        .slice(0, 40);
      let served = 0;
      for (const b of colorful) {
        const res = await small.get(`/v1/png/${b.slug}?variant=color&size=1024`, key);
        served += (await res.arrayBuffer()).byteLength;
        if (served > 1.5 * 1024 * 1024) break;
      }
      const stats = small.deps.assets.cache.stats();
      expect(served).toBeGreaterThan(1024 * 1024);
      expect(stats.bytes).toBeLessThanOrEqual(1024 * 1024);
      expect(stats.evictions).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
    // tens of cold 1024 px renders: slow on a loaded 2-core machine
  }, 60_000);
});
