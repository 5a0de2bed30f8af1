import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  checkSlugs,
  chooseArtwork,
  idsFor,
  job,
  optimizeJobs,
} from "../../../../scripts/catalog/steps/normalise";
import { undrawable } from "../../../../scripts/catalog/variant-choice";
import { tempDir } from "../../../support/temp";
import { draft } from "./draft";

test("drafts without usable artwork are dropped; simple-icons marks become mono", () => {
  const { usable, dropped } = chooseArtwork([draft("acme"), draft("bare", { siSvg: null })], {});
  expect(dropped).toBe(1);
  expect(usable.map((u) => u.draft.slug)).toEqual(["acme"]);
  expect(usable[0]?.variants.mono?.source).toBe("simple-icons");
  // a brand with its own mono mark needs no mono derivation; simple-icons get svgo's full preset
  expect(optimizeJobs(usable)).toEqual([
    { svg: draft("acme").siSvg as string, paths: true, mono: false },
  ]);
  expect(job({ svg: "<svg/>", source: "iconify:logos" }).paths).toBe(false);
});

test("artwork of any source that draws nothing is left out and listed", () => {
  const box = (viewBox: string, body = '<path d="M0 0h1v1z"/>') =>
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${viewBox}">${body}</svg>`;
  // an upstream export with a viewBox of zero size (logitech-g's thesvg mark), as simple-icons'
  expect(undrawable(box("-28.9 -29 0 0"))).toBe("viewBox of zero size");
  expect(undrawable(box("0 0 10 0"))).toBe("viewBox of zero size");
  expect(undrawable(box("0 0 10 3", "<title>x</title>"))).toBe("nothing drawn");
  expect(undrawable(box("0 0 10 3"))).toBeNull();
  const { usable, dropped, undrawn } = chooseArtwork(
    [draft("flat", { siSvg: box("0 0 24 0") }), draft("acme")],
    {},
  );
  expect(dropped).toBe(1);
  expect(usable.map((u) => u.draft.slug)).toEqual(["acme"]);
  expect(undrawn).toEqual(["flat mono simple-icons: viewBox of zero size"]);
});

test("the real build lists logitech-g's zero-size thesvg mark as left out", () => {
  const report = readFileSync(
    join(import.meta.dir, "../../../../build/catalog-report.txt"),
    "utf8",
  );
  expect(report).toMatch(
    /artwork that draws nothing .*left out: [1-9].*logitech-g color thesvg: viewBox of zero size/,
  );
});

test("an artwork override naming a missing skill-icons tile fails the build", () => {
  expect(() =>
    chooseArtwork([draft("acme")], { acme: { color: "skill-icons", why: "t" } }),
  ).toThrow("acme has no skill-icons tile");
});

test("duplicate and non-URL-safe slugs fail the build", () => {
  expect(() => checkSlugs(["a", "b"])).not.toThrow();
  expect(() => checkSlugs(["a", "a"])).toThrow("duplicate slugs");
  expect(() => checkSlugs(["a", "B c"])).toThrow("slugs not URL-safe: B c");
});

test("ids are stable: known slugs keep theirs, new ones are appended to the file", () => {
  const file = join(tempDir(), "ids.json");
  const first = idsFor(file, ["b", "a"]);
  expect(first.ids).toEqual({ a: 1, b: 2 });
  const second = idsFor(file, ["c", "a"]);
  expect(second.added).toEqual(["c"]);
  expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ a: 1, b: 2, c: 3 });
});
