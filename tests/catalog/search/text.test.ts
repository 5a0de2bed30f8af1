import { describe, expect, test } from "bun:test";
import {
  abbreviations,
  compact,
  deletions,
  editDistance,
  fold,
  normalizeQuery,
  SPELLING_RULES,
  swaps,
  transliterationSpellings,
  typoBudget,
  typoDistance,
  wordTails,
} from "../../../src/catalog/search/text";

describe("normalizeQuery", () => {
  test("trims, lower-cases, collapses inner whitespace", () => {
    expect(normalizeQuery("  Google \t\n  Drive  ")).toBe("google drive");
  });
  test("applies NFKC (full-width letters, ligatures, ideographic space)", () => {
    expect(normalizeQuery("ＧｉｔＨｕｂ")).toBe("github");
    expect(normalizeQuery("ﬁgma")).toBe("figma");
    expect(normalizeQuery("google\u3000drive")).toBe("google drive");
  });
  test("keeps diacritics and punctuation (the echo is what the user typed, normalized)", () => {
    expect(normalizeQuery("Citroën")).toBe("citroën");
    expect(normalizeQuery("Next.js")).toBe("next.js");
  });
  test("is idempotent", () => {
    const once = normalizeQuery("  ＡＢ  Ｃ ");
    expect(normalizeQuery(once)).toBe(once);
  });
});

describe("fold and compact", () => {
  test("fold strips diacritics", () => {
    expect(fold("Citroën")).toBe("citroen");
    expect(fold("Dassault Systèmes")).toBe("dassault systemes");
  });
  test("compact drops spaces, dots, dashes but keeps meaningful symbols", () => {
    expect(compact("Visual Studio Code")).toBe("visualstudiocode");
    expect(compact("VS Code")).toBe("vscode");
    expect(compact("Next.js")).toBe("nextjs");
    expect(compact("C++")).toBe("c++");
    expect(compact("C#")).toBe("c#");
  });
});

describe("word tails and abbreviations", () => {
  test("tails start at each later word", () => {
    expect(wordTails("google drive")).toEqual(["drive"]);
    expect(wordTails("visual studio code")).toEqual(["studio code", "code"]);
    expect(wordTails("github")).toEqual([]);
  });
  test("short forms of multi-word names", () => {
    expect(abbreviations("visual studio code")).toEqual(["vscode", "vsc"]);
    expect(abbreviations("google drive")).toEqual(["gdrive"]);
    expect(abbreviations("amazon web services")).toContain("aws");
    expect(abbreviations("github")).toEqual([]);
  });
});

describe("typo rule", () => {
  test("budget: none below 4 characters, one from 4, two from 8", () => {
    expect(typoBudget("abc")).toBe(0);
    expect(typoBudget("abcd")).toBe(1);
    expect(typoBudget("abcdefg")).toBe(1);
    expect(typoBudget("abcdefgh")).toBe(2);
  });
  test("a swap of neighbouring characters is one edit", () => {
    expect(editDistance("gihtub", "github", 5)).toBe(1);
    expect(editDistance("github", "github", 5)).toBe(0);
    expect(editDistance("gihtbu", "github", 5)).toBe(2);
    expect(typoDistance("gihtub", "github")).toBe(1);
  });
  test("a swap plus another edit, or two swaps, is two edits", () => {
    expect(editDistance("kubrentes", "kubernetes", 5)).toBe(2); // swap + deletion
    expect(editDistance("kbuernetse", "kubernetes", 5)).toBe(2); // two swaps
    expect(typoDistance("kbuernetse", "kubernetes")).toBe(2);
  });
  test("deletions lists every one-character deletion", () => {
    expect(deletions("abc")).toEqual(["bc", "ac", "ab"]);
  });
  test("swaps lists every neighbouring swap of different characters", () => {
    expect(swaps("abb")).toEqual(["bab"]);
    expect(swaps("abc")).toEqual(["bac", "acb"]);
  });
  test("distances outside the budget are refused", () => {
    expect(typoDistance("gti", "git")).toBe(1); // 3 characters: budget 0
    expect(typoDistance("slak", "slack")).toBe(1);
    expect(typoDistance("sxak", "slack")).toBe(2); // budget 1 + 1 = no match
    expect(typoDistance("gitxhxb", "github")).toBe(2); // 7 characters, 2 edits: no match
    expect(typoDistance("kubernxtxs", "kubernetes")).toBe(2); // 10 characters: budget 2
    expect(typoDistance("kuxernxtxs", "kubernetes")).toBe(3);
  });
  test("editDistance is Levenshtein without swaps, and stops at max + 1", () => {
    expect(editDistance("kitten", "sitting", 5)).toBe(3);
    expect(editDistance("abcdef", "uvwxyz", 2)).toBe(3);
  });
});

describe("spellings of a transliterated query", () => {
  test("the transliteration itself first, then each rule's spelling", () => {
    expect(transliterationSpellings("Yandeks").slice(0, 2)).toEqual(["yandeks", "yandex"]);
    expect(transliterationSpellings("soni")).toEqual(["soni", "sony"]);
    expect(transliterationSpellings("Telegramm")).toEqual(["telegramm", "telegram"]);
    expect(transliterationSpellings("yahu")).toEqual(["yahu", "yahoo"]);
    expect(transliterationSpellings("samseong")).toContain("samsung");
    expect(transliterationSpellings("hyeondae")).toContain("hyundai");
  });
  test("rules combine: Koka-Kola is Coca-Cola, Mersedes Mercedes, Ksiaomi Xiaomi", () => {
    expect(transliterationSpellings("Koka-Kola")).toContain("coca-cola");
    expect(transliterationSpellings("Mersedes")).toContain("mercedes");
    expect(transliterationSpellings("Ksiaomi")).toContain("xiaomi");
    expect(transliterationSpellings("Netfliks")).toContain("netflix");
    expect(transliterationSpellings("Spotifay")).toContain("spotify");
    expect(transliterationSpellings("Viza")).toContain("visa");
  });
  test("a spelling no rule applies to stays alone; no duplicates", () => {
    expect(transliterationSpellings("gugl")).toEqual(["gugl"]);
    const many = transliterationSpellings("koksi kasse zuzu");
    expect(new Set(many).size).toBe(many.length);
    expect(many.length).toBeLessThanOrEqual(2 ** SPELLING_RULES.length);
  });
  test("every rule's example holds: the transliteration becomes the brand's spelling", () => {
    for (const { example } of SPELLING_RULES) {
      for (const [, latin, brand] of example.matchAll(/(?:^|; )\S+ ([^:;]+): ([^;]+)/g)) {
        expect([latin, transliterationSpellings(latin as string).map(compact)]).toEqual([
          latin,
          expect.arrayContaining([compact(brand as string)]),
        ]);
      }
    }
  });
});
