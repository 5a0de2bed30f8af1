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
