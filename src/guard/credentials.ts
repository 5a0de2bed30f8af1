import { createHash, timingSafeEqual } from "node:crypto";
import { KEY_PREFIX } from "../accounts/keys";
import type { AccountService } from "../accounts/service";
import { invalidApiKey } from "../http/errors";
import type { Principal } from "../quota/principal";

/** The X-API-Key header's key, trimmed; undefined when absent or blank. */
export function apiKeyOf(headers: Headers): string | undefined {
  return headers.get("x-api-key")?.trim() || undefined;
}

/** The token of an `Authorization: Bearer <token>` header, trimmed; undefined otherwise. */
export function bearerOf(headers: Headers): string | undefined {
  return /^bearer\s+(.+)$/i.exec(headers.get("authorization") ?? "")?.[1]?.trim() || undefined;
}

export interface CredentialDeps {
  accounts: Pick<AccountService, "verifyKey">;
  /** verifies an access token (JWT); absent = bearer tokens are not accepted */
  verifyBearer?: (token: string) => Promise<Principal | null>;
}

/**
 * Which bearer tokens a route takes besides X-API-Key:
 *  - "none":         X-API-Key only;
 *  - "token":        or an access token (Authorization: Bearer <JWT>);
 *  - "token-or-key": or an API key sent as a bearer (clients that can set only Authorization).
 */
export type BearerPolicy = "none" | "token" | "token-or-key";

/**
 * The caller, from X-API-Key or (where the route allows it) a bearer; else 401 invalid_api_key.
 * Takes the request's Headers (not Elysia's `headers` object: a hook that reads `headers`
 * makes Elysia copy every header of every request on the route).
 */
export async function authenticate(
  deps: CredentialDeps,
  headers: Headers,
  bearer: BearerPolicy,
): Promise<Principal> {
  const key = apiKeyOf(headers);
  if (key) {
    const p = await deps.accounts.verifyKey(key);
    if (p) return p;
    throw invalidApiKey();
  }
  const token = bearer === "none" ? undefined : bearerOf(headers);
  if (token && bearer === "token-or-key" && token.startsWith(KEY_PREFIX)) {
    const p = await deps.accounts.verifyKey(token);
    if (p) return p;
  } else if (token && deps.verifyBearer) {
    const p = await deps.verifyBearer(token);
    if (p) return p;
  }
  throw invalidApiKey();
}

/**
 * Whether the request carries `Authorization: Bearer <expected>` (an operator secret such as
 * ADMIN_TOKEN or METRICS_TOKEN). Compared in constant time over SHA-256 digests, so neither the
 * token nor its length leaks through timing.
 */
export function hasBearerToken(request: Request, expected: string): boolean {
  const token = bearerOf(request.headers);
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return token !== undefined && timingSafeEqual(digest(token), digest(expected));
}
