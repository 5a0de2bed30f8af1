import { t } from "elysia";
import { type BucketLimits, MAX_DAILY_LIMIT, TIERS, type Tier } from "../quota/limits";

/** Who is calling: resolved from an API key (or, later, a bearer token). */
export interface Principal {
  accountId: string;
  /** the key used for this request; null for bearer-token callers */
  keyId: string | null;
  tier: Tier;
  limits: Partial<BucketLimits> | null;
}

export interface KeyRecord {
  id: string;
  /** sha256 hex of the full key; the key itself is never stored */
  hash: string;
  /** first characters of the key, safe to show in listings */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/** The accounts projection (rebuilt from account events). */
export interface Account {
  id: string;
  email: string | null;
  tier: Tier;
  limits: Partial<BucketLimits> | null;
  emailVerified: boolean;
  keys: KeyRecord[];
  createdAt: string;
  /** number of events applied */
  version: number;
}

interface EventBase {
  /** unique, time-sortable */
  id: string;
  accountId: string;
  ts: string;
}

export type AccountEvent = EventBase &
  (
    | {
        type: "account.registered";
        data: { email: string | null; tier: Tier; limits: Partial<BucketLimits> | null };
      }
    | { type: "key.issued"; data: { keyId: string; hash: string; prefix: string } }
    | { type: "key.revoked"; data: { keyId: string } }
    | { type: "tier.changed"; data: { tier: Tier; limits: Partial<BucketLimits> | null } }
    | { type: "email.verified"; data: Record<string, never> }
  );

/** Pure projection step: the account after one more event. */
export function applyAccountEvent(account: Account | null, e: AccountEvent): Account | null {
  if (e.type === "account.registered")
    return {
      id: e.accountId,
      email: e.data.email,
      tier: e.data.tier,
      limits: e.data.limits,
      emailVerified: false,
      keys: [],
      createdAt: e.ts,
      version: 1,
    };
  if (!account) return null;
  const next: Account = { ...account, version: account.version + 1 };
  switch (e.type) {
    case "key.issued":
      next.keys = [
        ...account.keys,
        {
          id: e.data.keyId,
          hash: e.data.hash,
          prefix: e.data.prefix,
          createdAt: e.ts,
          revokedAt: null,
        },
      ];
      break;
    case "key.revoked":
      next.keys = account.keys.map((k) =>
        k.id === e.data.keyId && !k.revokedAt ? { ...k, revokedAt: e.ts } : k,
      );
      break;
    case "tier.changed":
      next.tier = e.data.tier;
      next.limits = e.data.limits;
      break;
    case "email.verified":
      next.emailVerified = true;
      break;
  }
  return next;
}

export const TierSchema = t.Union(
  [t.Literal("free"), t.Literal("pro"), t.Literal("enterprise"), t.Literal("internal")],
  { description: `Plan tier: ${TIERS.join(", ")}` },
);

const DailyLimit = t.Union([t.Integer({ minimum: 0, maximum: MAX_DAILY_LIMIT }), t.Null()]);

export const LimitsSchema = t.Partial(
  t.Object({
    svg: DailyLimit,
    png: DailyLimit,
    webp: DailyLimit,
    catalog: DailyLimit,
    search: DailyLimit,
    domain: DailyLimit,
    batch: DailyLimit,
  }),
  {
    description: `Custom daily limits per bucket, enterprise accounts only (other tiers: 422); each an integer from 0 to ${MAX_DAILY_LIMIT}, or null for no cap; unknown buckets: 422`,
  },
);
