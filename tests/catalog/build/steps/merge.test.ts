import { expect, test } from "bun:test";
import { applyNameOverrides, mergeSummary } from "../../../../scripts/catalog/steps/merge";
import { draft } from "./draft";

test("a name override renames the brand and keeps the data's name as an alias", () => {
  const drafts = [draft("github", { name: "Github" }), draft("ibm", { name: "Ibm Corp" })];
  applyNameOverrides(drafts, { $comment: "skipped", github: "GitHub", ibm: "IBM" });
  expect(drafts[0]?.name).toBe("GitHub");
  // the same word in other casing is not kept as an alias
  expect(drafts[0]?.aliases).toEqual([]);
  expect(drafts[1]?.name).toBe("IBM");
  expect(drafts[1]?.aliases).toEqual(["Ibm Corp"]);
});

test("a name override for a slug no source has fails the build", () => {
  expect(() => applyNameOverrides([draft("github")], { gitlab: "GitLab" })).toThrow(
    "name override for unknown slug gitlab",
  );
});

test("the merge summary counts the brands each set added", () => {
  const stats = { simpleIcons: 2, logosNewBrands: 5, tablerNewBrands: 1 };
  const line = mergeSummary({ brands: [draft("a"), draft("b")], stats });
  expect(line).toStartWith("2 brands: 2 simple-icons, +5 logos");
  expect(line).toEndWith("+1 tabler, +0 thesvg only, +0 web3icons");
});
