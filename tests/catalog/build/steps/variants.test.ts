import { expect, test } from "bun:test";
import { analyzeColors } from "../../../../scripts/catalog/artwork";
import type { MonoResult } from "../../../../scripts/catalog/mono";
import { jobKey } from "../../../../scripts/catalog/optimize";
import { ID_TOKEN } from "../../../../scripts/catalog/optimize-shared";
import type { Fixtures } from "../../../../scripts/catalog/steps/load";
import { chooseArtwork, job } from "../../../../scripts/catalog/steps/normalise";
import {
  assembleBrand,
  checkOverrideSlugs,
  derivedMono,
  newMonoReport,
} from "../../../../scripts/catalog/steps/variants";
import { draft } from "./draft";

const report = newMonoReport;
const noOverrides = { mono: { derive: {}, skip: {} }, colors: {}, artwork: {} };
const optimizedSvg = `<svg viewBox="0 0 24 24"><path id="${ID_TOKEN}a" d="M0 0h24v24H0z"/></svg>`;

function optimizedOf(slug: string, over: Parameters<typeof draft>[1] = {}) {
  const [usable] = chooseArtwork([draft(slug, over)], {}).usable;
  if (!usable?.variants.mono) throw new Error("no mono");
  const results = new Map([[jobKey(job(usable.variants.mono)), optimizedSvg]]);
  return { usable, optimized: { results, monos: new Map<string, MonoResult>() } };
}

test("a brand is stored with its optimized SVGs, ids prefixed per variant, and its colour", () => {
  const { usable, optimized } = optimizedOf("acme");
  const made = assembleBrand(usable, 7, optimized, noOverrides, report());
  expect(made?.brand.id).toBe(7);
  expect(made?.brand.brandColor).toBe("ff0000");
  expect(made?.brand.colors.find((c) => c.role === "brand")?.source).toBe("simple-icons");
  expect(made?.brand.variants.mono?.svg).toContain('id="mono-acmea"');
  expect(made?.colorFromArtwork).toBe(false);
  expect(made?.rule.raw.mono?.svg).toBe(optimizedSvg);
});

test("a colour override wins; without a colour the artwork's dominant colour is taken", () => {
  const { usable, optimized } = optimizedOf("acme");
  const colors = { acme: { hex: "00ff00", why: "t" } };
  const made = assembleBrand(usable, 1, optimized, { ...noOverrides, colors }, report());
  expect(made?.brand.brandColor).toBe("00ff00");
  const plain = optimizedOf("plain", { hex: null });
  const fromArt = assembleBrand(plain.usable, 2, plain.optimized, noOverrides, report());
  expect(fromArt?.colorFromArtwork).toBe(true);
  expect(fromArt?.brand.brandColor).toBe("000000");
});

test("a brand whose artwork svgo could not read is left out", () => {
  const { usable } = optimizedOf("acme");
  const empty = { results: new Map(), monos: new Map() };
  expect(assembleBrand(usable, 1, empty, noOverrides, report())).toBeNull();
});

test("mono marks are derived from the icon unless an override skips them", () => {
  const svg = '<svg viewBox="0 0 1 1"><path fill="#f00" d="M0 0h1v1H0z"/></svg>';
  const icon = { svg, source: "iconify:logos", colors: analyzeColors(svg) };
  const key = jobKey(job(icon));
  const optimized = { results: new Map([[key, svg]]), monos: new Map([[key, { svg: "<svg/>" }]]) };
  const r = report();
  const none = { derive: {}, skip: {} };
  expect(derivedMono("a", { icon }, optimized, none, r)).toEqual({
    svg: "<svg/>",
    source: "flattened:iconify:logos",
  });
  expect(r.fromIcon).toBe(1);
  expect(derivedMono("a", { icon }, optimized, { derive: {}, skip: { a: "busy" } }, r)).toBeNull();
  expect(r.skipped.get("a")).toBe("override: busy");
});

test("an override for a slug the catalog lacks fails the build", () => {
  const { usable } = optimizedOf("acme");
  const fixtures = {
    ...noOverrides,
    mono: { derive: { gone: "x" }, skip: {} },
  } as unknown as Fixtures;
  expect(() => checkOverrideSlugs(fixtures, [usable], ["acme"])).toThrow(
    "mono override for unknown slug gone",
  );
  const art = { ...noOverrides, artwork: { gone: { color: "x", why: "" } } } as unknown as Fixtures;
  expect(() => checkOverrideSlugs(art, [usable], ["acme"])).toThrow(
    "artwork override for unknown slug gone",
  );
});
