import { t } from "elysia";
import { DomainError, limitReached, type Refusal } from "../platform/domain-errors";

/** The one error model: every error body is { error, message } (+ extra fields on 429). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body() {
    return { error: this.code, message: this.message, ...this.extra };
  }
}

/** The status of each kind of domain error: the one place a refusal becomes an HTTP status. */
export const STATUS: Record<Refusal, number> = {
  invalid: 422,
  unusable: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  limited: 429,
  provider_failed: 502,
  unavailable: 503,
};

/**
 * The answer to an error: an ApiError as it is, a domain error with its kind's status, its code,
 * message and fields, and Retry-After when it says when to retry; null for anything else (an
 * internal error).
 */
export function httpError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (!(err instanceof DomainError)) return null;
  const retry = err.retryAfterSeconds;
  return new ApiError(
    STATUS[err.kind],
    err.code,
    err.message,
    err.details,
    retry === undefined ? {} : { "retry-after": String(retry) },
  );
}

/** 429 rate_limit_exceeded (`limitReached`'s body) with Retry-After and `headers`. */
export function rateLimited(
  message: string,
  retryAfter: number,
  upgradeUrl: string,
  headers: Record<string, string> = {},
): ApiError {
  const e = httpError(limitReached(message, retryAfter, upgradeUrl)) as ApiError;
  return new ApiError(e.status, e.code, e.message, e.extra, { ...e.headers, ...headers });
}

/** A short-window cap: its size, window and what it counts (quota/limits.ts RATE_LIMITS). */
export interface WindowPolicy {
  limit: number;
  windowSeconds: number;
  /** what is counted, as the message names it ("GET /v1/usage", "the visitor counter") */
  label: string;
}

function windowName(seconds: number): string {
  if (seconds === 60) return "minute";
  if (seconds === 3600) return "hour";
  return `${seconds} seconds`;
}

/** 429 for a short-window cap (per minute, per hour) reached, retry in `retryAfter` seconds. */
export const windowLimited = (policy: WindowPolicy, retryAfter: number, upgradeUrl: string) =>
  rateLimited(
    `Rate limit of ${policy.limit} requests per ${windowName(policy.windowSeconds)} reached for ` +
      `${policy.label}. Retry in ${retryAfter} seconds.`,
    retryAfter,
    upgradeUrl,
  );

export const invalidApiKey = () =>
  new ApiError(
    401,
    "invalid_api_key",
    "Missing or invalid API key. Pass your key in the X-API-Key header.",
  );

/**
 * A full disk or quota, a read-only file, a database lock held past the wait, a damaged or
 * unreadable file (the codes store/embedded/db.ts gives SQLite's errors)
 */
const STORAGE_FULL = new Set(["ENOSPC", "EDQUOT", "EROFS", "EBUSY", "EIO"]);

/** Whether `err` (or its cause) is a storage failure a retry later may get past. */
export function isStorageFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (STORAGE_FULL.has((e as { code?: string }).code ?? "")) return true;
  return false;
}

/** 503 storage_unavailable with Retry-After: nothing was stored, nothing half-written. */
export const storageUnavailable = (retryAfterSeconds = 30) =>
  new ApiError(
    503,
    "storage_unavailable",
    "The service cannot store data right now (its storage is full or unavailable); nothing was changed. Retry later.",
    {},
    { "retry-after": String(retryAfterSeconds) },
  );

export const ErrorBody = t.Object(
  {
    error: t.String({ description: "machine-readable code" }),
    message: t.String(),
  },
  { additionalProperties: true },
);

/** 404 service_not_found: the error shape plus optional "did you mean" slugs. */
export const NotFoundBody = t.Object(
  {
    error: t.Literal("service_not_found"),
    message: t.String(),
    suggestions: t.Optional(
      t.Array(t.String(), {
        maxItems: 3,
        description:
          "Near-miss slugs from the search index, best first (absent when none); an extra field, the body keeps { error, message }",
      }),
    ),
  },
  {
    additionalProperties: true,
    description:
      "service_not_found: no catalog entry with this slug; suggestions, when any, are slugs it may have meant",
  },
);

export const RateLimitedBody = t.Object(
  {
    error: t.Literal("rate_limit_exceeded"),
    message: t.String(),
    reset_in_seconds: t.Integer(),
    upgrade_url: t.String(),
  },
  { description: "rate_limit_exceeded: the limit is reached until reset_in_seconds have passed" },
);
