/**
 * The descriptor rules (src/catalog/transactions/descriptor.ts, rules.ts): how a descriptor is
 * read, which words after a name are explained, and the MCC and brand kinds. Pure functions.
 */
import { describe, expect, test } from "bun:test";
import { brandGroups, mccGroups } from "../../../src/catalog/transactions/categories";
import {
  explainLeftover,
  namesNoMerchant,
  readDescriptor,
  wordsOf,
} from "../../../src/catalog/transactions/descriptor";
import { cityCountries, countryCode, stateCountry } from "../../../src/catalog/transactions/places";

const texts = (s: string) => readDescriptor(s).words.map((w) => (w.number ? "#" : w.text));
const explained = (s: string) => explainLeftover(wordsOf(s.toLowerCase()));

describe("readDescriptor", () => {
  test("processor and marketplace prefixes are the intermediary; the merchant follows", () => {
    const cases: [string, string, string[]][] = [
      ["SQ *BLUE BOTTLE COFFEE OAKLAND", "Square", ["blue", "bottle", "coffee", "oakland"]],
      ["SQU*SWEETGREEN", "Square", ["sweetgreen"]],
      ["TST* EL FARO GRILL 12", "Toast", ["el", "faro", "grill", "#"]],
      ["PAYPAL *NYTIMES 4029357733", "PayPal", ["nytimes", "#"]],
      ["PP*SPOTIFY", "PayPal", ["spotify"]],
      ["GOOGLE *YouTubePremium", "Google", ["you", "tube", "premium"]],
      ["AMZN Mktp US*RT4GH12Z0", "Amazon Marketplace", ["us"]],
      ["AMZNMKTPLACE AMAZON.CO.UK", "Amazon Marketplace", ["amazon"]],
      ["DD *DOORDASH SHAKESHACK", "DoorDash", ["shakeshack"]],
      ["UBER *UBER *TRIP", "Uber", ["trip"]],
    ];
    for (const [descriptor, via, words] of cases) {
      const d = readDescriptor(descriptor);
      expect({ descriptor, via: d.intermediary?.name, words: texts(descriptor) }).toEqual({
        descriptor,
        via,
        words,
      });
    }
    expect(readDescriptor("STARBUCKS 1523").intermediary).toBeNull();
  });
  test("bank operations are recognised in the languages of the statements", () => {
    const cases: [string, string][] = [
      ["CASH WITHDRAWAL 0042", "cash_withdrawal"],
      ["BARGELDAUSZAHLUNG GAA 1234", "cash_withdrawal"],
      ["LATE PAYMENT FEE", "fee"],
      ["INTEREST CHARGE ON PURCHASES", "interest"],
      ["TRANSFER FROM CHK 7788", "transfer"],
      ["VIREMENT SEPA RECU", "transfer"],
      ["VENMO PAYMENT 1023456789", "transfer"],
      ["PAYMENT THANK YOU-MOBILE", "payment_received"],
      ["CHECK 1042", "check"],
    ];
    for (const [descriptor, kind] of cases)
      expect({ descriptor, op: readDescriptor(descriptor).operation }).toEqual({
        descriptor,
        op: kind,
      });
    for (const merchant of ["VENMO *STARBUCKS", "THE HOME DEPOT 4712", "CHECKERS 1234"])
      expect(readDescriptor(merchant).operation).toBeNull();
  });
  test("numbers, store numbers, phone numbers and reference codes are numbers; names with digits are not", () => {
    expect(texts("MCDONALD'S F12345 CHICAGO IL")).toEqual(["mcdonald's", "#", "chicago", "il"]);
    expect(texts("NETFLIX.COM 866-579-7172 CA")).toEqual(["netflix", "#", "ca"]);
    expect(texts("DUNKIN #341234 Q35 BOSTON MA")).toEqual(["dunkin", "#", "#", "boston", "ma"]);
    expect(texts("H&M0123 NEW YORK")).toEqual(["h&m", "#", "new", "york"]);
    expect(texts("COOP-1234 ZUERICH")).toEqual(["coop", "#", "zuerich"]);
    expect(texts("7-ELEVEN 34512 DALLAS TX")).toEqual(["7-eleven", "#", "dallas", "tx"]);
    expect(texts("REMA 1000 123")).toEqual(["rema", "#", "#"]);
    // a name with a number after it is a word (a person's PayPal name), a code is a number
    expect(texts("PAYPAL *MARIAGARCIA77")).toEqual(["mariagarcia77"]);
    expect(readDescriptor("AUDIBLE*2K4LM89Q0").detail.map((w) => w.number)).toEqual([true]);
  });
  test("host names are read as hosts, a path and a legal form's dots are not", () => {
    const d = readDescriptor("UBER *TRIP HELP.UBER.COM");
    expect(d.words.map((w) => w.host ?? null)).toEqual([null, "help.uber.com"]);
    expect(readDescriptor("APPLE.COM/BILL 866-712-7753 CA").words[0]?.host).toBe("apple.com");
    expect(readDescriptor("ALDI GMBH CO.KG").words.some((w) => w.host)).toBe(false);
  });
  test("the merchant's part ends at a star or a dash; a processor's short code before a star is flagged", () => {
    const d = readDescriptor("LYFT *RIDE SUN 4PM");
    expect(texts("LYFT *RIDE SUN 4PM")).toEqual(["lyft"]);
    expect(d.detail.map((w) => w.text)).toEqual(["ride", "sun", "4pm"]);
    expect(texts("KFC - LONDON BRIDGE")).toEqual(["kfc"]);
    expect(readDescriptor("NF*NETFLIX.COM").codeHead).toBe(true);
    expect(readDescriptor("NYTIMES*NYTIMES SUBSCRIPT").codeHead).toBe(false);
    expect(readDescriptor("DICK'S SPORTING GOO").nameLength).toBe(19);
  });
  test("an intermediary alone: only numbers, regions, country codes and payment words after it", () => {
    expect(namesNoMerchant(readDescriptor("AMZN MKTP US*2K8J90TQ2").words)).toBe(true);
    expect(namesNoMerchant(readDescriptor("UBER* TRIP").words)).toBe(true);
    expect(namesNoMerchant(readDescriptor("SQ *SUNRISE BAKERY").words)).toBe(false);
    expect(namesNoMerchant(readDescriptor("PAYPAL *MARIAGARCIA77").words)).toBe(false);
  });
});

describe("explainLeftover", () => {
  test("store numbers, places, store and payment words and legal forms are explained", () => {
    for (const rest of [
      "1523 omaha ne",
      "#3426 bentonville ar",
      "stores 3297 london gb",
      "supercenter #1234",
      "gb london",
      "1234 sydney ns aus",
      "ltd",
      "gmbh-zw/berlin",
      "sagt danke",
      "mary st",
      "east #123 new york ny",
      "eu-uk",
    ])
      expect({ rest, explained: explained(rest).explained }).toEqual({ rest, explained: true });
  });
  test("another business's words are not: the name matched is only part of it", () => {
    for (const rest of [
      "lemonade stand",
      "beach cafe 12",
      "tree bistro",
      "faro grill 12",
      "street books",
    ])
      expect({ rest, explained: explained(rest).explained }).toEqual({ rest, explained: false });
  });
  test("the country a place names, and the kinds of business words name", () => {
    expect(explained("1234 vancouver bc").country).toBe("ca");
    expect(explained("lidl gb london".slice(5)).country).toBe("gb");
    expect(explained("oil 57442143508").kinds).toEqual([["fuel"]]);
    expect(explained("opticians").kinds).toEqual([["health"]]);
    // "EL FARO GRILL": explained only for a brand that is a restaurant
    expect(explained("grill 12")).toEqual({ explained: true, country: null, kinds: [["food"]] });
  });
});

describe("merchant category codes and brand kinds", () => {
  test("an MCC names groups; ranges resolve narrow first", () => {
    expect(mccGroups("5541")).toEqual(["fuel"]);
    expect(mccGroups("5814")).toEqual(["food"]);
    expect(mccGroups("3058")).toEqual(["airline"]);
    expect(mccGroups("5533")).toEqual(["auto"]);
    expect(mccGroups("0001")).toEqual([]);
    expect(mccGroups(undefined)).toEqual([]);
  });
  test("a brand's kind from OSM tags, its description and its name", () => {
    expect([
      ...brandGroups({ name: "Shell", categories: ["amenity/fuel"], sources: ["simple-icons"] }),
    ]).toEqual(["fuel"]);
    expect([
      ...brandGroups({
        name: "Valero",
        description: "Bakery chain in Catalonia",
        sources: ["name-suggestion-index"],
      }),
    ]).toEqual(["food"]);
    expect([...brandGroups({ name: "Japan Airlines", sources: ["simple-icons"] })]).toEqual([
      "airline",
    ]);
    expect([...brandGroups({ name: "Tesco", sources: ["simple-icons"] })]).toEqual([]);
  });
});

describe("places (places.json, written by scripts/build-places.ts)", () => {
  test("cities of 50,000 inhabitants and more, folded, with their countries", () => {
    expect(cityCountries("vasteras")).toEqual(["se"]);
    expect(cityCountries("new york")).toEqual(["us"]);
    expect(cityCountries("london")).toEqual(expect.arrayContaining(["gb", "ca"]));
    // a town below 50,000 inhabitants is no city here (it is explained before a state code)
    expect(cityCountries("bentonville")).toBeNull();
  });
  test("country codes and names in the statements' languages; state and province codes", () => {
    for (const [name, code] of [
      ["de", "de"],
      ["deu", "de"],
      ["deutschland", "de"],
      ["allemagne", "de"],
      ["uk", "gb"],
      ["aus", "au"],
      ["espana", "es"],
    ] as const)
      expect({ name, code: countryCode(name) }).toEqual({ name, code });
    expect(stateCountry("ne")).toBe("us");
    expect(stateCountry("bc")).toBe("ca");
    expect(stateCountry("nsw")).toBe("au");
    expect(stateCountry("zz")).toBeNull();
  });
});
