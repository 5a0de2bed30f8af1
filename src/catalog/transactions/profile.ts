/**
 * What a brand is for the descriptor matcher: its names, and where and as what it trades
 * (countries from OpenStreetMap or its national domains, the nationality its description names,
 * its kinds of business); and whether two catalog entries are the same company entered twice.
 */
import { countryOf, registrableDomain } from "../brand/domain";
import type { Brand } from "../built-catalog";
import { type Entry, hostName } from "../search/entry";
import { fold } from "../search/text";
import { splitRegistrable } from "../store/schema";
import { brandGroups, type Group } from "./categories";
import { NATIONALITIES } from "./rules";

/** What a brand is for the matcher: its names and where and as what it trades. */
export interface Profile {
  name: string;
  names: Set<string>;
  compacts: Set<string>;
  labels: Set<string>;
  popularity: number;
  /** countries it trades in (OSM's, or its domains' when all are national); null: anywhere */
  countries: Set<string> | null;
  /** per domain label, the countries of the domains of that label when all are national */
  labelCountries: Map<string, Set<string> | null>;
  /** countries its description names it after ("American", "Canadian") */
  home: Set<string>;
  groups: Set<Group>;
}

/** A brand's profile, from its search entry and its record. */
export function profileOf(entry: Entry, brand: Brand): Profile {
  return {
    name: entry.names[0] ?? fold(brand.name),
    names: new Set(entry.names),
    compacts: new Set(entry.compacts),
    labels: new Set(entry.hostNames),
    popularity: entry.popularity,
    countries: brand.countries?.length ? new Set(brand.countries) : domainCountries(brand.domains),
    labelCountries: labelCountries(brand.domains),
    home: homeCountries(brand.description),
    groups: brandGroups(brand),
  };
}

/**
 * Whether two catalog entries are the same company entered twice (Tesco and Tesco, TIM and TIM):
 * the same name, at least one mapped by OpenStreetMap, and nothing known of them disagreeing
 * (countries, home country, kind of business).
 */
export function sameCompany(a: Profile | null, b: Profile | null): boolean {
  if (!a || !b || a.name !== b.name) return false;
  if (!a.groups.size && !b.groups.size && !a.countries && !b.countries) return false;
  const meet = <T>(x: Set<T> | null, y: Set<T> | null) =>
    !x?.size || !y?.size || [...x].some((v) => y.has(v));
  return meet(a.countries, b.countries) && meet(a.home, b.home) && meet(a.groups, b.groups);
}

/** The countries of a brand's domains when every one is a country's ("sainsburys.co.uk" -> gb). */
function domainCountries(domains: string[]): Set<string> | null {
  if (!domains.length) return null;
  const out = new Set<string>();
  for (const d of domains) {
    const reg = registrableDomain(d);
    if (!reg) return null;
    const c = countryOf(splitRegistrable(reg)[1]);
    if (!c) return null;
    out.add(c === "uk" ? "gb" : c);
  }
  return out;
}

/** Per domain label (as the search entry keys it), the countries of its domains when all are national. */
function labelCountries(domains: string[]): Map<string, Set<string> | null> {
  const byLabel = new Map<string, string[]>();
  for (const d of domains) {
    const label = hostName(d);
    byLabel.set(label, [...(byLabel.get(label) ?? []), d]);
  }
  return new Map([...byLabel].map(([label, ds]) => [label, domainCountries(ds)]));
}

/** The countries a description names a company after ("American fast food chain" -> us). */
function homeCountries(description: string | undefined): Set<string> {
  const out = new Set<string>();
  const d = description?.toLowerCase() ?? "";
  for (const [word, code] of Object.entries(NATIONALITIES))
    if (
      d.includes(word) &&
      new RegExp(`(?:^|[^a-z])${word.replace(".", "\\.")}(?:[^a-z]|$)`).test(d)
    )
      out.add(code);
  return out;
}
