/**
 * Publishable keys on /i/ URLs: the key must be active, the page must be served from one of its
 * allowed hosts (the request's Origin, else its Referer), and its own daily cap, if any, must
 * not be reached. Browsers set both headers themselves, but any other client can send any
 * value or none: the allow-list keeps honest pages of other sites from using the key, the
 * daily caps bound what a forger can spend (docs/images.md).
 */

import type { AccountService } from "../accounts/service";
import { forbidden, limitReached, unauthenticated } from "../platform/domain-errors";
import type { Principal } from "../quota/principal";
import type { RateLimiter } from "../quota/rate-limit";

export interface PublishableGate {
  /** the principal to charge; refused: unknown key, origin not allowed, daily cap reached */
  admit(key: string, request: Request): Promise<Principal>;
}

/** The host (with its port when not the scheme's default) a page request came from, or null. */
export function requestHost(headers: Headers): string | null {
  for (const name of ["origin", "referer"]) {
    const value = headers.get(name);
    if (!value || value === "null") continue;
    try {
      const u = new URL(value);
      if (u.protocol === "http:" || u.protocol === "https:") return u.host.toLowerCase();
    } catch {}
    return null;
  }
  return null;
}

/**
 * Whether `host` (`name` or `name:port`) matches one pattern: `example.com` exactly,
 * `*.example.com` any subdomain (not the apex); a pattern with a port needs that port, one
 * without takes any.
 */
export function hostAllowed(host: string, patterns: readonly string[]): boolean {
  const colon = host.lastIndexOf(":");
  const name = colon > 0 && !host.endsWith("]") ? host.slice(0, colon) : host;
  return patterns.some((p) => {
    const hasPort = /:\d+$/.test(p);
    const target = hasPort ? host : name;
    const pattern = p;
    if (pattern.startsWith("*.")) {
      const suffix = pattern.slice(1);
      return target.endsWith(suffix) && target.length > suffix.length;
    }
    return target === pattern;
  });
}

export class PublishableKeys implements PublishableGate {
  constructor(
    private accounts: AccountService,
    private limiter: RateLimiter,
    private upgradeUrl: string,
  ) {}

  async admit(key: string, request: Request): Promise<Principal> {
    const caller = await this.accounts.verifyPublishable(key.trim());
    if (!caller) throw invalidPublishable();
    const host = requestHost(request.headers);
    if (!host || !hostAllowed(host, caller.origins))
      throw forbidden(
        "origin_not_allowed",
        host
          ? `This publishable key is not allowed on ${host}; add the host to the key's origins.`
          : "This publishable key works only from its allowed origins, and the request named none (no Origin or Referer header).",
      );
    if (caller.dailyCap !== null) {
      const d = await this.limiter.hit(
        {
          name: "pk-daily",
          limit: caller.dailyCap,
          windowSeconds: 86_400,
          label: "this publishable key",
        },
        `pk:${caller.keyId}`,
      );
      if (!d.allowed)
        throw limitReached(
          `Daily cap of ${caller.dailyCap} requests reached for this publishable key. It resets at 00:00 UTC.`,
          d.retryAfter,
          this.upgradeUrl,
        );
    }
    return caller.principal;
  }
}

const invalidPublishable = () =>
  unauthenticated("invalid_api_key", "Unknown or revoked publishable key (key=pk_…).");
