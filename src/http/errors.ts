import { t } from "elysia";

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

/**
 * 429 rate_limit_exceeded, the one builder of the spec's 429 body ({error, message,
 * reset_in_seconds, upgrade_url}) with Retry-After, for REST, MCP and the visitor counter alike.
 */
export function rateLimited(
  message: string,
  retryAfter: number,
  upgradeUrl: string,
  headers: Record<string, string> = {},
): ApiError {
  return new ApiError(
    429,
    "rate_limit_exceeded",
    message,
    { reset_in_seconds: retryAfter, upgrade_url: upgradeUrl },
    { "retry-after": String(retryAfter), ...headers },
  );
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

/** Errors of a disk that is full, over quota or read-only: the service cannot store data. */
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

export const validationError = (message: string) => new ApiError(422, "validation_error", message);

export const notFound = (code: string, message: string) => new ApiError(404, code, message);

/**
 * 404 service_not_found; the slug is named when it is worth echoing (not over-long or garbled).
 * `suggestions`, when any, are near-miss slugs from the search index (an extra optional field:
 * the body keeps the spec's { error, message }).
 */
export const serviceNotFound = (slug?: string, suggestions: string[] = []) =>
  new ApiError(
    404,
    "service_not_found",
    slug === undefined
      ? "No catalog entry with that slug."
      : `No catalog entry with slug "${slug}".`,
    suggestions.length ? { suggestions } : {},
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
