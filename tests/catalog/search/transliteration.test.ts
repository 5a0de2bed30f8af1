/**
 * A query in another script that matches nothing natively is transliterated, and the Latin
 * spelling (or one of its spelling variants: src/catalog/search/text.ts SPELLING_RULES) must be
 * a brand's whole name or alias: never the start of a longer name, never a typo of one. On the
 * real built catalog (the database beside CATALOG_FILE).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { transliterate } from "transliteration";
import type { Brand } from "../../../src/catalog/built-catalog";
import { SearchIndex } from "../../../src/catalog/search/service";
import { compact, fold, transliterationSpellings } from "../../../src/catalog/search/text";
import { CatalogService } from "../../../src/catalog/service";
import { sharedCatalogSource } from "../../support/catalog";

let index: SearchIndex;
const slugs = (q: string) => index.search(q, 20).map((b) => b.slug);

beforeAll(async () => {
  const catalog = new CatalogService(sharedCatalogSource());
  await catalog.load();
  index = new SearchIndex(catalog);
});

/** Every name and alias of the brand, compact. */
const wholeNames = (b: Brand) => [b.name, ...b.aliases, b.slug].map((n) => compact(fold(n)));

describe("a transliterated query finds the brand it spells", () => {
  test("as transliterated, or with the brand's spelling of the same sounds", () => {
    for (const [q, slug] of [
      ["ソニー", "sony"], // soni: Sony
      ["Телеграмм", "telegram"], // telegramm: Telegram
      ["Нетфликс", "netflix"], // netfliks: Netflix
      ["Кока-Кола", "cocacola"], // koka-kola: Coca-Cola
      ["ヤフー", "yahoo"], // yahu: Yahoo
      ["삼성", "samsung"], // samseong: Samsung
      ["현대", "hyundai"], // hyeondae: Hyundai
      ["Мерседес", "mercedes"], // mersedes: Mercedes
      ["Тесла", "tesla"],
      ["华为", "huawei"], // hua wei: Huawei
    ]) {
      expect([q, slugs(q as string)[0]]).toEqual([q, slug]);
    }
  });
});

describe("never the start of a longer name, never a typo of one", () => {
  test("ソニー (soni) is Sony, never Sonic or Sonic Drive-In", () => {
    const found = slugs("ソニー");
    expect(found).toEqual(["sony"]);
    expect(index.search("soni", 5).map((b) => b.slug)).toContain("sonic");
  });

  test("Амазон (amazon) is Amazon alone: none of the names that start with it", () => {
    expect(slugs("Амазон")).toEqual(["amazon"]);
    expect(index.search("amazon", 5).length).toBeGreaterThan(1);
  });

  test("Гугл (gugl) is one typo from Gull, the fuel chain: no answer beats a wrong one", () => {
    expect(slugs("Гугл")).toEqual([]);
    expect(index.search("gugl", 5).map((b) => b.slug)).toContain("gull");
  });

  test("every answer to a sample of queries in other scripts is a whole name or alias", () => {
    const queries = [
      "ソニー",
      "ソニック",
      "Сбербанк",
      "Амазон",
      "Микрософт",
      "Эппл",
      "Фейсбук",
      "Спотифай",
      "Мерседес",
      "Ксерокс",
      "Сони",
      "Самсунг",
      "Мега",
      "카카오",
      "네이버",
      "小米",
      "京东",
      "Βόλβο",
    ];
    let answered = 0;
    for (const q of queries) {
      const spellings = transliterationSpellings(transliterate(q)).map(compact);
      for (const b of index.search(q, 20)) {
        answered++;
        // a name in the query's own script, as typed so far ("카카오" KakaoTalk's 카카오톡), or a
        // whole name or alias that is a spelling of the transliteration, never a longer name
        // that starts with one
        const names = wholeNames(b);
        const native = names.some((n) => n.startsWith(compact(fold(q))));
        const whole = native || spellings.some((s) => names.includes(s));
        expect([q, b.slug, whole]).toEqual([q, b.slug, true]);
      }
    }
    expect(answered).toBeGreaterThan(5);
  });
});
