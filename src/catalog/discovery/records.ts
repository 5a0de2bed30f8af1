import { registrableDomain } from "../brand/domain";
import { type StoredSvg, VARIANTS, type Variant } from "../built-catalog";
import { sha256 } from "./artwork";
import type { DiscoveryRecord } from "./store/port";

/** A domain that found nothing, failed or was refused is tried again after this long. */
export const RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The sha256 of each variant, in a fixed order (artwork compared across records). */
const artworkHashes = (r: DiscoveryRecord): Partial<Record<Variant, string>> =>
  Object.fromEntries(
    VARIANTS.filter((v) => r.variants[v]).map((v) => [v, (r.variants[v] as StoredSvg).sha256]),
  );

const sameArtwork = (a: DiscoveryRecord, b: DiscoveryRecord) =>
  JSON.stringify(artworkHashes(a)) === JSON.stringify(artworkHashes(b));

/** A found record whose artwork is all low-resolution (tried again after RETRY_AFTER_MS). */
export const lowResOnly = (r: DiscoveryRecord) =>
  r.status === "found" && r.assets.length > 0 && r.assets.every((a) => a.lowRes);

/**
 * When found domains are checked again (DISCOVERY_REFRESH_DAYS), and what an attempt leaves
 * stored: the refresh schedule of docs/discovery.md.
 */
export class RefreshSchedule {
  /** `refreshDays`: a found domain is checked again about this many days later; 0: never */
  constructor(private refreshDays: number) {}

  /**
   * When a found record is checked again: a day later when its artwork is all low-resolution
   * or was read over plain http (a better or https answer replaces it), else after
   * `refreshDays` ±20% (a stable jitter per domain and time, so instances agree and checks
   * spread out); null when refreshing is off.
   */
  at(r: DiscoveryRecord): string | null {
    const at = Date.parse(r.at);
    if (lowResOnly(r) || r.assets.some((a) => a.provenance === "website-http"))
      return new Date(at + RETRY_AFTER_MS).toISOString();
    const days = this.refreshDays;
    if (days <= 0) return null;
    const u = Number.parseInt(sha256(`${r.domain} ${r.at}`).slice(0, 8), 16) / 0x1_0000_0000;
    return new Date(at + days * DAY_MS * (0.8 + 0.4 * u)).toISOString();
  }

  /** Whether a found record is due to be checked again at `now` (epoch ms). */
  due(r: DiscoveryRecord, now: number): boolean {
    if (r.refreshAt) return now >= Date.parse(r.refreshAt);
    // a record stored before refreshAt was recorded: low-resolution artwork a day on, any
    // other after refreshDays
    const age = now - Date.parse(r.at);
    return lowResOnly(r) ? age >= RETRY_AFTER_MS : age >= this.staleAfterMs();
  }

  /** Age after which a found record without refreshAt is due (never when refreshing is off). */
  staleAfterMs(): number {
    const days = this.refreshDays;
    return days > 0 ? days * DAY_MS : Number.POSITIVE_INFINITY;
  }

  /** The record with its next check (none when refreshing is off). */
  withRefresh(r: DiscoveryRecord): DiscoveryRecord {
    const next = this.at(r);
    const out = { ...r };
    if (next) out.refreshAt = next;
    else delete out.refreshAt;
    return out;
  }

  /**
   * The record to store after an attempt (null: a check found nothing changed), given the
   * domain's found record before it: new or other artwork replaces the old (its hashes are
   * kept in `previous`); an attempt that finds nothing keeps what was found and notes when it
   * tried. `pinned`: the variants an operator's pin holds on the brand.
   */
  outcome(
    previous: DiscoveryRecord | null,
    attempted: DiscoveryRecord | null,
    now: string,
    pinned: Variant[],
  ): DiscoveryRecord {
    const at = attempted?.at ?? now;
    if (previous && attempted?.status !== "found") {
      const kept: DiscoveryRecord = { ...previous, at, change: "unchanged" };
      delete kept.previous;
      // nothing found this time: try again in a day
      kept.refreshAt = new Date(Date.parse(at) + RETRY_AFTER_MS).toISOString();
      return attempted ? kept : this.withRefresh(kept);
    }
    if (attempted?.status !== "found") return attempted as DiscoveryRecord;
    const record: DiscoveryRecord = { ...attempted, change: "new" };
    if (previous) {
      record.change = sameArtwork(previous, attempted) ? "unchanged" : "replaced";
      if (record.change === "replaced") record.previous = artworkHashes(previous);
      if (pinned.length) record.pinned = pinned;
    }
    return this.withRefresh(record);
  }
}

/** The registrable domain an operator means ("WWW.Example.com" -> "example.com"); throws. */
export function domainOfInput(host: string): string {
  const domain = registrableDomain(
    host
      .trim()
      .toLowerCase()
      .replace(/^www\./, ""),
  );
  if (!domain) throw new Error(`${host} has no registrable domain`);
  return domain;
}

/** A domain's record taken down by an operator (`by`), at `at`: its artwork gone for good. */
export function takenDown(
  previous: DiscoveryRecord | null,
  domain: string,
  at: string,
  by?: string,
): DiscoveryRecord {
  return {
    ...(previous ?? emptyRecord(domain, null)),
    status: "taken_down",
    at,
    reason: "taken down by an operator",
    variants: {},
    ...(by ? { by } : {}),
  };
}

/** A record with nothing found yet (its status "nothing"). */
export function emptyRecord(domain: string, brandId: number | null): DiscoveryRecord {
  return {
    domain,
    status: "nothing",
    at: new Date().toISOString(),
    reason: null,
    brandId,
    slug: null,
    created: false,
    name: null,
    brandColor: null,
    pageUrl: null,
    aliases: [],
    variants: {},
    assets: [],
  };
}

/** A record as operators see it: provenance and variant names, no markup. */
export function discoveryView(r: DiscoveryRecord) {
  const { variants, ...rest } = r;
  return { ...rest, variants: VARIANTS.filter((v) => variants[v] !== undefined) };
}

/** Number of records per status. */
export function summarize(records: DiscoveryRecord[]): Record<string, number> {
  const out: Record<string, number> = {
    found: 0,
    nothing: 0,
    refused: 0,
    failed: 0,
    taken_down: 0,
  };
  for (const r of records) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}
