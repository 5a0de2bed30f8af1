import type { BucketLimits, Tier } from "./limits";

/** Who is calling: resolved from an API key or a bearer token. */
export interface Principal {
  accountId: string;
  /** the key used for this request; null for bearer-token callers */
  keyId: string | null;
  tier: Tier;
  limits: Partial<BucketLimits> | null;
}
