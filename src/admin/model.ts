import { t } from "elysia";
import { LimitsSchema, PublishableKeyView, TierSchema } from "../accounts/model";

const KeyView = t.Object({
  id: t.String(),
  prefix: t.String({ description: "First characters of the key, safe to show" }),
  createdAt: t.String({ format: "date-time" }),
  revokedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

/** An account as operators see it: keys by id, prefix and dates, never a hash. */
export const AccountViewSchema = t.Object({
  accountId: t.String(),
  email: t.Union([t.String(), t.Null()]),
  tier: TierSchema,
  limits: t.Union([LimitsSchema, t.Null()]),
  emailVerified: t.Boolean(),
  createdAt: t.String({ format: "date-time" }),
  keys: t.Array(KeyView, { description: "Every key, revoked ones included; never a hash" }),
  publishableKeys: t.Array(PublishableKeyView, {
    description: "Publishable keys (pk_…), revoked ones included; never a hash",
  }),
});
