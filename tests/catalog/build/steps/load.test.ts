import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadFixtures } from "../../../../scripts/catalog/steps/load";
import { tempDir } from "../../../support/temp";

test("load reads every curated fixture of the repository", () => {
  const f = loadFixtures(resolve(import.meta.dir, "../../../.."));
  expect(f.mono.derive).toBeObject();
  expect(f.mono.skip).toBeObject();
  expect(Object.keys(f.names).length).toBeGreaterThan(0);
  expect(Object.keys(f.legacy).length).toBeGreaterThan(0);
});

test("load maps each fixture file to its field and fails on a missing one", () => {
  const root = tempDir();
  mkdirSync(join(root, "fixtures"));
  const files = [
    "name-overrides.json",
    "alias-overrides.json",
    "artwork-overrides.json",
    "mono-overrides.json",
    "color-overrides.json",
    "domain-overrides.json",
    "legacy-domains.json",
  ];
  for (const file of files) writeFileSync(join(root, "fixtures", file), JSON.stringify({ file }));
  expect(() => loadFixtures(root)).toThrow("directory-parents.json");
  writeFileSync(join(root, "fixtures", "directory-parents.json"), "{}");
  expect(() => loadFixtures(root)).toThrow("directory-joins.json");
  writeFileSync(join(root, "fixtures", "directory-joins.json"), '{"join":{},"apart":{}}');
  const f = loadFixtures(root);
  expect(f.names as unknown).toEqual({ file: "name-overrides.json" });
  expect(f.colors as unknown).toEqual({ file: "color-overrides.json" });
  expect(f.directoryParents).toEqual({});
  expect(f.directoryJoins).toEqual({ join: {}, apart: {} });
});
