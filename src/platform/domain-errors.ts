/**
 * The errors services throw when they refuse: each says what kind of refusal it is and the
 * spec's error code, with no HTTP in it. The HTTP layer alone turns a kind into a status
 * (`httpError` in src/http/errors.ts, applied by the error plugin and the MCP tools); the admin
 * CLI prints the message.
 */

/** What kind of refusal an error is (the status each gets: src/http/errors.ts). */
export type Refusal =
  /** the input breaks a rule of the API */
  | "invalid"
  /** the input cannot be used: a bad signature, token, payload or file */
  | "unusable"
  /** no caller is known, or the credentials are wrong */
  | "unauthenticated"
  /** the caller may not do this */
  | "forbidden"
  | "not_found"
  /** the current state does not allow it (taken, decided already, subscribed) */
  | "conflict"
  /** a limit is reached until `retryAfterSeconds` have passed */
  | "limited"
  /** a provider the service relies on failed */
  | "provider_failed"
  /** not available on this server, or not now */
  | "unavailable";

export class DomainError extends Error {
  constructor(
    readonly kind: Refusal,
    /** the spec's machine-readable code ("email_taken", "report_decided", ...) */
    readonly code: string,
    message: string,
    /** fields the answer carries beside `error` and `message` */
    readonly details: Record<string, unknown> = {},
    /** when the same call may succeed again, in seconds */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  /** The same refusal with `prefix` before its message (which item of a batch refused). */
  prefixed(prefix: string): DomainError {
    return new DomainError(
      this.kind,
      this.code,
      `${prefix}${this.message}`,
      this.details,
      this.retryAfterSeconds,
    );
  }
}

/** An input that breaks a rule: `validation_error` unless a more precise code is given. */
export const invalid = (message: string, code = "validation_error") =>
  new DomainError("invalid", code, message);

export const unusable = (code: string, message: string, details?: Record<string, unknown>) =>
  new DomainError("unusable", code, message, details);

export const unauthenticated = (code: string, message: string) =>
  new DomainError("unauthenticated", code, message);

export const forbidden = (code: string, message: string) =>
  new DomainError("forbidden", code, message);

export const notFound = (code: string, message: string, details?: Record<string, unknown>) =>
  new DomainError("not_found", code, message, details);

export const conflict = (code: string, message: string, details?: Record<string, unknown>) =>
  new DomainError("conflict", code, message, details);

export const providerFailed = (code: string, message: string) =>
  new DomainError("provider_failed", code, message);

export const unavailable = (code: string, message: string, retryAfterSeconds?: number) =>
  new DomainError("unavailable", code, message, {}, retryAfterSeconds);

/**
 * A limit reached: the one builder of the spec's rate_limit_exceeded answer ({error, message,
 * reset_in_seconds, upgrade_url}, retry after `retryAfter` seconds), for REST, MCP, the login
 * throttle and publishable keys alike.
 */
export const limitReached = (message: string, retryAfter: number, upgradeUrl: string) =>
  new DomainError(
    "limited",
    "rate_limit_exceeded",
    message,
    { reset_in_seconds: retryAfter, upgrade_url: upgradeUrl },
    retryAfter,
  );

/**
 * No catalog entry with that slug; the slug is named when it is worth echoing (not over-long or
 * garbled). `suggestions`, when any, are near-miss slugs from the search index (an extra
 * optional field: the body keeps the spec's { error, message }).
 */
export const serviceNotFound = (slug?: string, suggestions: string[] = []) =>
  notFound(
    "service_not_found",
    slug === undefined
      ? "No catalog entry with that slug."
      : `No catalog entry with slug "${slug}".`,
    suggestions.length ? { suggestions } : {},
  );
