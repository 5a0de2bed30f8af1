import { createHash, timingSafeEqual } from "node:crypto";
import { ApiError } from "../http/errors";
import { bearerOf } from "./credentials";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * The operator tokens /admin routes take, each with the identity that pins, report decisions,
 * takedowns and audit events record: a token of ADMIN_TOKENS (`name:token,...`) is
 * `admin:<name>`; ADMIN_TOKEN, shared by whoever holds it, is `admin:token-<8 hex>` (the first
 * 8 hex digits of the token's SHA-256: it tells tokens apart, e.g. across a rotation, and
 * reveals nothing of the token).
 */
export class Operators {
  private tokens: { id: string; digest: Buffer }[];

  constructor(entries: { id: string; token: string }[]) {
    this.tokens = entries.map((e) => ({ id: e.id, digest: digest(e.token) }));
  }

  get size() {
    return this.tokens.length;
  }

  /**
   * The identity of the request's `Authorization: Bearer` token, null when it is none of them.
   * Compared in constant time over SHA-256 digests, every token every time, so neither a token,
   * its length nor which one matched leaks through timing.
   */
  identify(request: Request): string | null {
    const token = bearerOf(request.headers);
    if (token === undefined) return null;
    const d = digest(token);
    let found: string | null = null;
    for (const t of this.tokens) if (timingSafeEqual(d, t.digest) && found === null) found = t.id;
    return found;
  }
}

/** The identity of the shared ADMIN_TOKEN: `admin:token-` and 8 hex digits of its SHA-256. */
export const sharedTokenId = (token: string) =>
  `admin:token-${digest(token).toString("hex").slice(0, 8)}`;

/** ADMIN_TOKENS: `name:token` pairs, comma-separated (names unique; see src/config.ts). */
export function parseOperatorTokens(list: string): { id: string; token: string }[] {
  return list
    .split(",")
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf(":");
      return { id: `admin:${pair.slice(0, at)}`, token: pair.slice(at + 1) };
    });
}

/** The operators of a configuration; null when it has no operator token (no /admin routes). */
export function operatorsOf(config: { ADMIN_TOKEN?: string; ADMIN_TOKENS?: string }) {
  const entries = config.ADMIN_TOKENS ? parseOperatorTokens(config.ADMIN_TOKENS) : [];
  if (config.ADMIN_TOKEN)
    entries.push({ id: sharedTokenId(config.ADMIN_TOKEN), token: config.ADMIN_TOKEN });
  return entries.length ? new Operators(entries) : null;
}

/**
 * The operator check of /admin routes: `Authorization: Bearer <an operator token>`, else 401.
 * Answers the operator's identity.
 */
export function requireOperator(request: Request, operators: Operators): string {
  const id = operators.identify(request);
  if (id === null)
    throw new ApiError(
      401,
      "unauthorized",
      "Pass an operator token (ADMIN_TOKEN or one of ADMIN_TOKENS) as Authorization: Bearer <token>.",
    );
  return id;
}
