import { t } from "elysia";
import { type BucketLimits, MAX_DAILY_LIMIT, TIERS, type Tier } from "../quota/limits";

export type { Principal } from "../quota/principal";

export interface KeyRecord {
  id: string;
  /** sha256 hex of the full key; the key itself is never stored */
  hash: string;
  /** first characters of the key, safe to show in listings */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/**
 * A publishable key (`pk_…`): usable only on /i/ image URLs, only from its allowed origins
 * (host patterns such as `app.example.com` or `*.example.com`, optionally with `:port`), charged
 * to the account's buckets, with an optional daily cap of its own. Only its hash is stored.
 */
export interface PublishableKeyRecord {
  id: string;
  hash: string;
  prefix: string;
  origins: string[];
  /** requests per UTC day through this key; null = only the account's own limits */
  dailyCap: number | null;
  createdAt: string;
  revokedAt: string | null;
}

/**
 * Personal data of a self-registered account, AES-GCM encrypted with the account's own data key
 * (kept outside the log, destroyed on deletion: crypto-shredding; see accounts/pii.ts).
 */
export interface SealedPii {
  /** the e-mail address as given (sealed) */
  email: string | null;
  /** the argon2id PHC hash of the password (sealed); null for operator-created accounts */
  passwordHash: string | null;
}

/** The accounts projection (rebuilt from account events). */
export interface Account {
  id: string;
  /** plaintext e-mail of accounts registered by earlier versions (operator label); else null */
  email: string | null;
  /** sealed personal data (null for accounts registered by earlier versions, and once deleted) */
  pii?: SealedPii | null;
  /** refresh and access tokens issued before this instant are void (password reset, deletion) */
  tokensRevokedAt?: string | null;
  /** set once the account is deleted: it keeps only its id, tier and revoked keys */
  deletedAt?: string | null;
  tier: Tier;
  limits: Partial<BucketLimits> | null;
  emailVerified: boolean;
  keys: KeyRecord[];
  /** publishable keys (absent on accounts that never made one) */
  publishableKeys?: PublishableKeyRecord[];
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
        data: {
          /** plaintext (written by earlier versions only); new events carry `pii` instead */
          email: string | null;
          tier: Tier;
          limits: Partial<BucketLimits> | null;
          pii?: SealedPii;
        };
      }
    | { type: "key.issued"; data: { keyId: string; hash: string; prefix: string } }
    | { type: "key.revoked"; data: { keyId: string } }
    | {
        type: "publishable.issued";
        data: {
          keyId: string;
          hash: string;
          prefix: string;
          origins: string[];
          dailyCap: number | null;
        };
      }
    | { type: "publishable.revoked"; data: { keyId: string } }
    | { type: "tier.changed"; data: { tier: Tier; limits: Partial<BucketLimits> | null } }
    | { type: "email.verified"; data: Record<string, never> }
    | { type: "password.changed"; data: { passwordHash: string } }
    | { type: "tokens.revoked"; data: { reason: "password_reset" | "deleted" } }
    | { type: "account.deleted"; data: Record<string, never> }
  );

/** Pure projection step: the account after one more event. */
export function applyAccountEvent(account: Account | null, e: AccountEvent): Account | null {
  if (e.type === "account.registered")
    return {
      id: e.accountId,
      email: e.data.email,
      pii: e.data.pii ?? null,
      tokensRevokedAt: null,
      deletedAt: null,
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
    case "publishable.issued": {
      const { keyId, ...rest } = e.data;
      next.publishableKeys = [
        ...(account.publishableKeys ?? []),
        { id: keyId, ...rest, createdAt: e.ts, revokedAt: null },
      ];
      break;
    }
    case "publishable.revoked":
      next.publishableKeys = revokeAll(account.publishableKeys, e.ts, e.data.keyId);
      break;
    case "tier.changed":
      next.tier = e.data.tier;
      next.limits = e.data.limits;
      break;
    case "email.verified":
      next.emailVerified = true;
      break;
    case "password.changed":
      next.pii = { email: account.pii?.email ?? null, passwordHash: e.data.passwordHash };
      break;
    case "tokens.revoked":
      next.tokensRevokedAt = e.ts;
      break;
    case "account.deleted":
      next.email = null;
      next.pii = null;
      next.deletedAt = e.ts;
      next.tokensRevokedAt = e.ts;
      next.keys = account.keys.map((k) => (k.revokedAt ? k : { ...k, revokedAt: e.ts }));
      if (account.publishableKeys) next.publishableKeys = revokeAll(account.publishableKeys, e.ts);
      break;
  }
  return next;
}

/** Publishable keys with `keyId` (or every one) revoked at `ts`, earlier revocations kept. */
function revokeAll(
  keys: PublishableKeyRecord[] | undefined,
  ts: string,
  keyId?: string,
): PublishableKeyRecord[] {
  return (keys ?? []).map((k) =>
    (keyId === undefined || k.id === keyId) && !k.revokedAt ? { ...k, revokedAt: ts } : k,
  );
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

// ---- /auth request and response bodies ----

const Email = t.String({ format: "email", maxLength: 254, description: "E-mail address" });
const Password = t.String({
  minLength: 10,
  maxLength: 256,
  description: "10 to 256 characters",
});

/** register validates the address and password rules; login takes any strings (401 if wrong) */
export const Credentials = (strict: boolean) =>
  t.Object({
    email: strict ? Email : t.String({ maxLength: 254 }),
    password: strict ? Password : t.String({ maxLength: 256 }),
  });

export const EmailBody = t.Object({ email: t.String({ maxLength: 254 }) });
export const PasswordBody = t.Object({ password: t.String({ maxLength: 256 }) });
export const RefreshBody = t.Object({ refreshToken: t.String({ maxLength: 200 }) });
export const TokenBody = t.Object({ token: t.String({ maxLength: 200 }) });
export const ResetBody = t.Object({ token: t.String({ maxLength: 200 }), password: Password });

export const RegisteredResponse = t.Object({
  accountId: t.String(),
  email: t.String(),
  tier: TierSchema,
  emailVerified: t.Boolean(),
  keyId: t.String(),
  apiKey: t.String({ description: "Shown once; only its hash is stored" }),
});

export const TokenPairResponse = t.Object({
  accessToken: t.String({ description: "JWT for Authorization: Bearer" }),
  tokenType: t.Literal("Bearer"),
  expiresIn: t.Integer({ description: "Seconds until the access token expires" }),
  refreshToken: t.String({ description: "Single-use; valid 30 days" }),
});

export const MeResponse = t.Object({
  accountId: t.String(),
  email: t.Union([t.String(), t.Null()]),
  tier: TierSchema,
  emailVerified: t.Boolean(),
  createdAt: t.String(),
  keys: t.Array(t.Object({ keyId: t.String(), prefix: t.String(), createdAt: t.String() }), {
    description: "Active keys (revoked ones are not listed)",
  }),
});

export const NewKeyResponse = t.Object({
  keyId: t.String(),
  apiKey: t.String({ description: "Shown once; only its hash is stored" }),
});

export const Verified = t.Object({ emailVerified: t.Literal(true) });
export const Accepted = t.Object({ message: t.String() });
export const JwksResponse = t.Object({
  keys: t.Array(t.Record(t.String(), t.Unknown())),
});

// ---- publishable keys ----

/** Host patterns: `app.example.com`, `*.example.com` (subdomains only), optional `:port`. */
export const ORIGIN_PATTERN =
  "^(\\*\\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(:[0-9]{1,5})?$";
export const MAX_ORIGINS = 20;

export const PublishableKeyBody = t.Object({
  origins: t.Array(
    t.String({
      maxLength: 260,
      pattern: ORIGIN_PATTERN,
      description:
        "Host pattern, lowercase: app.example.com, *.example.com (any subdomain, not the apex), localhost:5173 (with a port: that port only)",
      error:
        "Invalid origins: each a lowercase host pattern such as app.example.com or *.example.com, optionally with :port",
    }),
    {
      minItems: 1,
      maxItems: MAX_ORIGINS,
      description: "Where pages using the key are served from",
    },
  ),
  dailyCap: t.Optional(
    t.Union([t.Integer({ minimum: 1, maximum: MAX_DAILY_LIMIT }), t.Null()], {
      description:
        "Requests per UTC day through this key (on top of the account's own daily limits); null or absent: no own cap",
    }),
  ),
});

export const PublishableKeyView = t.Object({
  keyId: t.String(),
  prefix: t.String(),
  origins: t.Array(t.String()),
  dailyCap: t.Union([t.Integer(), t.Null()]),
  createdAt: t.String(),
  revokedAt: t.Union([t.String(), t.Null()]),
});

export const NewPublishableKeyResponse = t.Composite([
  PublishableKeyView,
  t.Object({
    publishableKey: t.String({
      description: "pk_…, shown once (only its hash is stored); meant to be public in <img> URLs",
    }),
  }),
]);

export const PublishableKeyList = t.Object({ keys: t.Array(PublishableKeyView) });

export function publishableView(k: PublishableKeyRecord) {
  return {
    keyId: k.id,
    prefix: k.prefix,
    origins: k.origins,
    dailyCap: k.dailyCap,
    createdAt: k.createdAt,
    revokedAt: k.revokedAt,
  };
}
