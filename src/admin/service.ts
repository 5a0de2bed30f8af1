import { type Account, publishableView } from "../accounts/model";

/** An account as operators see it: keys by id, prefix and dates, never a hash. */
export interface AccountView {
  accountId: string;
  email: string | null;
  tier: Account["tier"];
  limits: Account["limits"];
  emailVerified: boolean;
  createdAt: string;
  keys: { id: string; prefix: string; createdAt: string; revokedAt: string | null }[];
  publishableKeys: ReturnType<typeof publishableView>[];
}

export function accountView(a: Account): AccountView {
  return {
    accountId: a.id,
    email: a.email,
    tier: a.tier,
    limits: a.limits,
    emailVerified: a.emailVerified,
    createdAt: a.createdAt,
    keys: a.keys.map((k) => ({
      id: k.id,
      prefix: k.prefix,
      createdAt: k.createdAt,
      revokedAt: k.revokedAt,
    })),
    publishableKeys: (a.publishableKeys ?? []).map(publishableView),
  };
}

/** Most accounts one listing returns (the operator narrows it with an e-mail). */
export const LIST_LIMIT = 200;
