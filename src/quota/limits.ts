/** Tiers, buckets and the daily limits table of SPEC.md ("Limits"). null = no cap. */
export const TIERS = ["free", "pro", "enterprise", "internal"] as const;
export type Tier = (typeof TIERS)[number];

export const BUCKETS = ["svg", "png", "webp", "catalog", "search", "domain", "batch"] as const;
export type Bucket = (typeof BUCKETS)[number];

export type BucketLimits = Record<Bucket, number | null>;

/** The largest custom daily limit an operator may set for one bucket (enterprise). */
export const MAX_DAILY_LIMIT = 1_000_000_000;

/**
 * What is wrong with custom `limits` for an account of `tier`, as sent by an operator (HTTP
 * body or CLI), or null when they are acceptable (or absent): known buckets only, each an
 * integer from 0 to MAX_DAILY_LIMIT or null (no cap), and for enterprise accounts only (other
 * tiers follow the tier table). The message starts with the offending field.
 */
export function limitsProblem(tier: unknown, limits: unknown): string | null {
  if (limits === undefined || limits === null) return null;
  if (typeof limits !== "object" || Array.isArray(limits))
    return "limits: must be an object of daily limits per bucket";
  for (const [bucket, value] of Object.entries(limits)) {
    if (!(BUCKETS as readonly string[]).includes(bucket))
      return `limits.${bucket}: unknown bucket (one of ${BUCKETS.join(", ")})`;
    const ok =
      value === null ||
      (typeof value === "number" &&
        Number.isInteger(value) &&
        value >= 0 &&
        value <= MAX_DAILY_LIMIT);
    if (!ok)
      return `limits.${bucket}: must be an integer from 0 to ${MAX_DAILY_LIMIT}, or null for no cap`;
  }
  if (tier !== "enterprise") return "limits: custom limits apply to enterprise accounts only";
  return null;
}

/**
 * Daily requests per API key and bucket. The pro figures of the spec's tier table are
 * authoritative over the figures in its sample usage response.
 */
export const DAILY_LIMITS: Record<"free" | "pro", BucketLimits> = {
  free: { svg: 50, png: 50, webp: 50, search: 30, batch: 5, catalog: 100, domain: 20 },
  pro: { svg: 2000, png: 2000, webp: 2000, search: 500, batch: 50, catalog: null, domain: 300 },
};

/** Unique slugs allowed in one POST /v1/catalog/batch call. */
export const BATCH_SLUG_CAP: Record<Tier, number> = {
  free: 10,
  pro: 50,
  enterprise: 50,
  internal: 50,
};

/** Descriptors allowed in one POST /v1/transactions call (the batch route's rule: free keys 10). */
export const TRANSACTIONS_CAP: Record<Tier, number> = {
  free: 10,
  pro: 100,
  enterprise: 100,
  internal: 100,
};

/** Effective daily limit for a tier (enterprise: the account's custom limits; internal: none). */
export function dailyLimit(
  tier: Tier,
  bucket: Bucket,
  custom?: Partial<BucketLimits> | null,
): number | null {
  if (tier === "internal") return null;
  if (tier === "enterprise") return custom?.[bucket] ?? null;
  return DAILY_LIMITS[tier][bucket];
}

/** A short-window cap: at most `limit` requests per fixed window of `windowSeconds`. */
export interface RatePolicy {
  /** part of the counter key; one budget per policy */
  name: string;
  limit: number;
  windowSeconds: number;
  /** for the 429 message, e.g. "GET /v1/usage" */
  label: string;
}

/** The spec's "Separate account and safety caps" (each route has its own budget). */
export const RATE_LIMITS = {
  usage: { name: "usage", limit: 60, windowSeconds: 60, label: "GET /v1/usage" },
  analyticsUsage: {
    name: "analytics-usage",
    limit: 60,
    windowSeconds: 60,
    label: "GET /v1/analytics/usage",
  },
  analyticsEvents: {
    name: "analytics-events",
    limit: 20,
    windowSeconds: 60,
    label: "GET /v1/analytics/events",
  },
  analyticsMisses: {
    name: "analytics-misses",
    limit: 60,
    windowSeconds: 60,
    label: "GET /v1/analytics/misses",
  },
  resendVerification: {
    name: "resend-verification",
    limit: 3,
    windowSeconds: 3600,
    label: "POST /auth/resend-verification",
  },
  reports: {
    name: "reports",
    limit: 20,
    windowSeconds: 86_400,
    label: "POST /v1/reports",
  },
  ownReports: {
    name: "own-reports",
    limit: 60,
    windowSeconds: 60,
    label: "GET /v1/reports",
  },
  forgotPassword: {
    name: "forgot-password",
    limit: 3,
    windowSeconds: 3600,
    label: "POST /auth/forgot-password",
  },
} as const satisfies Record<string, RatePolicy>;
