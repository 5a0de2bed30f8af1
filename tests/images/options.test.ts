import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import type { Brand } from "../../src/catalog/built-catalog";
import { findBrand, has, lacks, pngSize } from "../assets/util";
import { makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";

let t: TestApp;
let pro: string;
let free: string;
let proKid: string;

beforeAll(async () => {
  t = await makeApp();
  pro = await t.key("pro");
  free = await t.key("free");
  proKid = (await t.deps.accounts.verifyKey(pro))!.keyId!;
});
afterAll(() => t.close());

/** A signed /i/ URL of the key, valid one hour. */
const signed = (kid: string, file: string, params: Record<string, string> = {}) =>
  t.deps.signer.sign(kid, `/i/${file}`, params, Math.floor(Date.now() / 1000) + 3600);

/** Straight RGBA pixels of an answered PNG or WebP, decoded by sharp. */
async function pixels(r: Response) {
  expect(r.status).toBe(200);
  const { data, info } = await sharp(new Uint8Array(await r.arrayBuffer()))
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

// WCAG 2.x relative luminance and contrast, written out here independently of src/
const lin = (c: number) =>
  c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4;
const lum = (r: number, g: number, b: number) =>
  0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
const ratio = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

/** Alpha-weighted median contrast of the pixels at least half opaque against `bg` (#rrggbb). */
function inkContrast(data: Uint8Array, bg: string): number {
  const n = Number.parseInt(bg.slice(1), 16);
  const lb = lum(n >> 16, (n >> 8) & 255, n & 255);
  const samples: [number, number][] = [];
  for (let i = 0; i < data.length; i += 4) {
    const a = data[i + 3] as number;
    if (a >= 128) samples.push([ratio(lum(data[i]!, data[i + 1]!, data[i + 2]!), lb), a]);
  }
  samples.sort((x, y) => x[0] - y[0]);
  const total = samples.reduce((s, [, w]) => s + w, 0);
  let acc = 0;
  for (const [r, w] of samples) {
    acc += w;
    if (acc * 2 >= total) return r;
  }
  return 1;
}

const BACKGROUNDS = [
  "#ffffff",
  "#000000",
  "#121212",
  "#f5f5f5",
  "#777777",
  "#808080",
  "#595959",
  "#a0a0a0",
  "#ff0000",
  "#00ff00",
  "#0000ff",
  "#ffff00",
  "#00ffff",
  "#ff00ff",
  "#1e3a8a",
  "#fde68a",
  "#7c3aed",
  "#065f46",
  "#f97316",
  "#24292f",
];

describe("bg=: a variant with at least 3:1 contrast on the page, measured on the pixels", () => {
  test("20 backgrounds, paid and free keys, on brands with mono, colour and dark/light artwork", async () => {
    expect(BACKGROUNDS.length).toBe(20);
    const brands: Brand[] = [
      t.deps.catalog.brand("github")!,
      findBrand(t, (b) => has(b, "color", "mono", "dark", "light"), "colour, mono, dark and light"),
      findBrand(t, (b) => has(b, "color") && lacks(b, "mono"), "colour without mono"),
    ];
    const served = new Set<string>();
    for (const brand of brands) {
      // a fresh free key per brand: 20 requests stay within its daily 50
      const freshFree = (await t.deps.accounts.createAccountWithKey({ tier: "free" })).keyId;
      for (const [key, kid] of [
        [pro, proKid],
        [free, freshFree],
      ] as const)
        for (const bg of BACKGROUNDS) {
          const path = await signed(kid, `${brand.slug}.png`, {
            size: "64",
            variant: "color",
            bg: bg.slice(1),
          });
          const r = await t.req(path);
          served.add(`${key === pro ? "pro" : "free"} ${r.headers.get("x-svg-variant")}`);
          const { data } = await pixels(r);
          const c = inkContrast(data, bg);
          if (c < 3) throw new Error(`${brand.slug} on ${bg}: contrast ${c.toFixed(2)} < 3`);
        }
    }
    // paid keys get several real variants; free keys stay on mono (or its silhouette)
    expect([...served].filter((s) => s.startsWith("pro")).length).toBeGreaterThan(1);
    expect(
      [...served].filter((s) => s.startsWith("free")).every((s) => /mono|placeholder/.test(s)),
    ).toBe(true);
  });

  test("the same option on /v1/png: a black mark on black comes back light", async () => {
    const r = await t.get("/v1/png/github?size=64&bg=000000", pro);
    const { data } = await pixels(r);
    expect(inkContrast(data, "#000000")).toBeGreaterThanOrEqual(3);
    const plain = await pixels(await t.get("/v1/png/github?size=64", pro));
    expect(inkContrast(plain.data, "#000000")).toBeLessThan(3);
    await expectError(await t.get("/v1/png/github?bg=red", pro), 422, "validation_error");
  });
});

describe("size, dpr, greyscale, fallback", () => {
  test("dpr multiplies the box; size x dpr over 2048 is 422", async () => {
    const r = await t.req(await signed(proKid, "github.png", { size: "48", dpr: "3" }));
    expect(pngSize(new Uint8Array(await r.arrayBuffer()))).toEqual({ width: 144, height: 144 });
    const v1 = await t.get("/v1/webp/github?size=40&dpr=2", pro);
    expect((await sharp(new Uint8Array(await v1.arrayBuffer())).metadata()).width).toBe(80);
    for (const q of ["size=1024&dpr=3", "dpr=4", "dpr=0"]) {
      await expectError(await t.get(`/v1/png/github?${q}`, pro), 422, "validation_error");
      const params = Object.fromEntries(new URLSearchParams(q));
      await expectError(
        await t.req(await signed(proKid, "github.png", params)),
        422,
        "validation_error",
      );
    }
  });

  test("greyscale: every visible pixel is grey; without it the colour artwork is not", async () => {
    const colourful = findBrand(
      t,
      (b) => has(b, "color") && b.variants.color!.svg.includes("#"),
      "colour",
    );
    const grey = await pixels(
      await t.req(
        await signed(proKid, `${colourful.slug}.png`, {
          variant: "color",
          greyscale: "true",
          size: "64",
        }),
      ),
    );
    const spread = (d: Uint8Array) => {
      let max = 0;
      for (let i = 0; i < d.length; i += 4)
        if ((d[i + 3] as number) >= 128)
          max = Math.max(
            max,
            Math.max(d[i]!, d[i + 1]!, d[i + 2]!) - Math.min(d[i]!, d[i + 1]!, d[i + 2]!),
          );
      return max;
    };
    expect(spread(grey.data)).toBeLessThanOrEqual(2);
    const colour = await pixels(
      await t.get(`/v1/png/${colourful.slug}?variant=color&size=64`, pro),
    );
    expect(spread(colour.data)).toBeGreaterThan(30);
    const svg = await t.req(await signed(proKid, `${colourful.slug}.svg`, { greyscale: "1" }));
    expect(await svg.text()).toContain('feColorMatrix type="saturate" values="0"');
  });

  test("fallback: placeholder (default), monogram, or 404 for a brand without artwork", async () => {
    const bare = findBrand(t, (b) => Object.keys(b.variants).length === 0, "no artwork");
    const placeholder = await t.req(await signed(proKid, `${bare.slug}.svg`));
    expect(placeholder.headers.get("x-svg-variant")).toBe("placeholder");
    expect(placeholder.headers.get("cache-control")).toMatch(/^public, max-age=(3600|35\d\d)$/);
    expect(await placeholder.text()).toContain("Logo not available");
    const monogram = await t.req(
      await signed(proKid, `${bare.slug}.svg`, { fallback: "monogram" }),
    );
    expect(await monogram.text()).toContain("<text");
    const hidden = await t.req(await signed(proKid, `${bare.slug}.png`, { fallback: "404" }));
    expect(hidden.status).toBe(404);
    expect(((await hidden.json()) as { error: string }).error).toBe("service_not_found");
    // a brand with artwork is not affected
    expect((await t.req(await signed(proKid, "github.png", { fallback: "404" }))).status).toBe(200);
  });

  test("bad options on a signed URL are 422 naming the parameter", async () => {
    const cases: [string, Record<string, string>, string][] = [
      ["github.png", { size: "8" }, "size"],
      ["github.png", { variant: "neon" }, "variant"],
      ["github.png", { fallback: "none" }, "fallback"],
      ["github.png", { greyscale: "yes" }, "greyscale"],
      ["github.png", { bg: "fff" }, "bg"],
      ["github.png", { format: "webp" }, "format"],
      ["github", { format: "gif" }, "format"],
      ["github.svg", { size: "64" }, "size"],
    ];
    for (const [file, params, name] of cases) {
      const r = await t.req(await signed(proKid, file, params));
      expect(r.status).toBe(422);
      expect(((await r.json()) as { message: string }).message).toContain(name);
    }
    const twice = await t.req(`${await signed(proKid, "github.png")}&size=32&size=64`);
    expect(twice.status).toBe(422);
  });
});
