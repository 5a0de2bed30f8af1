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

export const invalidApiKey = () =>
  new ApiError(
    401,
    "invalid_api_key",
    "Missing or invalid API key. Pass your key in the X-API-Key header.",
  );

/** Errors of a disk that is full, over quota or read-only: the service cannot store data. */
const STORAGE_FULL = new Set(["ENOSPC", "EDQUOT", "EROFS"]);

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
