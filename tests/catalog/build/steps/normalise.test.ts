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
