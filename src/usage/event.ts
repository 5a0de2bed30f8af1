import type { Bucket, Tier } from "../quota/limits";

/** One metered request, as appended to the usage event log. Never updated or deleted. */
export interface UsageEvent {
  /** UUIDv7: unique and time-sortable; a replay with the same id is ignored */
  id: string;
  /**
   * ISO 8601 UTC time the request was metered (its quota unit consumed), so `day` is the day
   * whose counter it counted against, even for a request that straddles midnight
   */
  ts: string;
  /** UTC day of ts, YYYY-MM-DD */
  day: string;
  accountId: string;
  /** the API key used ("" for a bearer-token caller) */
  keyId: string;
  tier: Tier;
  bucket: Bucket;
  /** route pattern, e.g. /v1/svg/:slug */
  route: string;
  /**
   * the brand the request was about: the path's slug, or for GET /v1/brand the slug of the brand
   * the domain or e-mail resolved to (null when none)
   */
  slug: string | null;
  variant: string | null;
  /** asset routes: the image format served (svg, png, webp); absent elsewhere and on older events */
  format?: string;
  /**
   * what was asked for and could not be served (a 404, a placeholder, a search without result),
   * as `kind:value`: `domain:acme.test`, `email:acme.test` (the address's domain only),
   * `slug:acme`, `query:acme corp` (normalised). Absent on every other event.
   */
  miss?: string[];
  status: number;
  /** time from authentication to the end of the response, in ms */
  latencyMs: number;
  /**
   * 429 refusals are folded before they reach the log: one event stands for `count` refusals of
   * one key and bucket within one second (its first one's time, route, slug and latency).
   * Absent on every other event (it stands for one request).
   */
  count?: number;
}
