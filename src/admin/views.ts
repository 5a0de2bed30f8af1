import type { Static } from "elysia";
import { type Account, publishableView } from "../accounts/model";
import type { AccountViewSchema } from "./model";

/** An account as operators see it (the AccountViewSchema of the admin routes). */
export type AccountView = Static<typeof AccountViewSchema>;

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
