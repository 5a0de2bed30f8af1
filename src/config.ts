import { createPrivateKey } from "node:crypto";
import { type Static, Type as T } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/**
 * Every setting the service reads, parsed and validated once at start.
 * A bad value stops start-up with a one-line message naming the variable.
 */
const Env = T.Object({
  PORT: T.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: T.String({ minLength: 1, default: "0.0.0.0" }),
  DATA_DIR: T.String({ minLength: 1, default: "./data" }),
  CATALOG_FILE: T.String({ minLength: 1, default: "./build/catalog.json" }),
  MONGODB_URL: T.Optional(T.String({ pattern: "^mongodb(\\+srv)?://" })),
  MONGODB_DB: T.String({ minLength: 1, default: "brandassets" }),
  ADMIN_TOKEN: T.Optional(T.String({ minLength: 16 })),
  // named operator tokens: "name:token" pairs, comma-separated (src/guard/operator.ts)
  ADMIN_TOKENS: T.Optional(
    T.String({
      pattern:
        "^\\s*[A-Za-z0-9._@-]{1,64}:[^,\\s]{16,}\\s*(,\\s*[A-Za-z0-9._@-]{1,64}:[^,\\s]{16,}\\s*)*$",
    }),
  ),
  METRICS_TOKEN: T.Optional(T.String({ minLength: 16 })),
  UPGRADE_URL: T.String({ pattern: "^https?://", default: "https://brandassets.dev/pricing" }),
  UPSTASH_REDIS_REST_URL: T.Optional(T.String({ pattern: "^https?://" })),
  UPSTASH_REDIS_REST_TOKEN: T.Optional(T.String({ minLength: 1 })),
  COUNTER_TIMEOUT_MS: T.Integer({ minimum: 1, maximum: 10000, default: 150 }),
  TRUST_PROXY: T.Boolean({ default: false }),
  KEY_CACHE_TTL_MS: T.Integer({ minimum: 0, maximum: 600000, default: 30000 }),
  RENDER_CACHE_MB: T.Integer({ minimum: 1, maximum: 4096, default: 64 }),
  RENDER_QUEUE_MS: T.Integer({ minimum: 1, maximum: 60_000, default: 2000 }),
  RENDER_TIMEOUT_MS: T.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  USAGE_RETENTION_DAYS: T.Integer({ minimum: 1, maximum: 36_500, default: 90 }),
  USAGE_FLUSH_MS: T.Integer({ minimum: 1, maximum: 60000, default: 250 }),
  USAGE_FLUSH_EVENTS: T.Integer({ minimum: 1, maximum: 100000, default: 8192 }),
  USAGE_ON_STORE_FULL: T.Union([T.Literal("serve"), T.Literal("refuse")], { default: "serve" }),
  USAGE_DURABILITY: T.Union([T.Literal("batched"), T.Literal("strict")], { default: "batched" }),
  USAGE_SPILL_RESERVE_MB: T.Integer({ minimum: 0, maximum: 1024, default: 16 }),
  USAGE_SPILL_MAX_MB: T.Integer({ minimum: 1, maximum: 1_048_576, default: 1024 }),
  USAGE_HOURLY_DAYS: T.Integer({ minimum: 1, maximum: 36_500, default: 90 }),
  SHUTDOWN_GRACE_MS: T.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  USAGE_EXPORT_SETTLE_MS: T.Integer({ minimum: 0, maximum: 600_000, default: 30_000 }),
  STRIPE_SECRET_KEY: T.Optional(T.String({ minLength: 1 })),
  STRIPE_WEBHOOK_SECRET: T.Optional(T.String({ minLength: 1 })),
  STRIPE_PRICE_PRO: T.Optional(T.String({ minLength: 1 })),
  STRIPE_API_BASE: T.Optional(T.String({ pattern: "^https?://[^/?#]+/?$" })),
  PUBLIC_URL: T.Optional(T.String({ pattern: "^https?://[^\\s]+$" })),
  VISITOR_COUNTER_ENABLED: T.Boolean({ default: false }),
  VISITOR_COUNTER_ORIGINS: T.String({ minLength: 1, default: "*" }),
  JWT_SECRET: T.Optional(T.String({ minLength: 32 })),
  JWT_PRIVATE_KEY: T.Optional(T.String({ pattern: "-----BEGIN PRIVATE KEY-----" })),
  JWT_ISSUER: T.String({ minLength: 1, default: "brand-asset-api" }),
  JWT_AUDIENCE: T.String({ minLength: 1, default: "brand-asset-api" }),
  JWT_ACCESS_TTL: T.Integer({ minimum: 60, maximum: 86400, default: 900 }),
  SMTP_URL: T.Optional(T.String({ pattern: "^smtps?://" })),
  MAIL_FROM: T.String({ minLength: 3, default: "Brand Asset API <no-reply@localhost>" }),
  LOG_LEVEL: T.Union(
    [T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error")],
    {
      default: "info",
    },
  ),
  // "*" or a comma-separated list of origins (scheme://host[:port]) that browsers may call from
  CORS_ORIGINS: T.String({
    pattern: "^(\\*|https?://[^/,\\s]+(\\s*,\\s*https?://[^/,\\s]+)*)$",
    default: "*",
  }),
  LOG_REQUESTS: T.Union([T.Literal("all"), T.Literal("errors"), T.Literal("off")], {
    default: "errors",
  }),
  DISCOVERY: T.Boolean({ default: false }),
  DISCOVERY_PROXY: T.Optional(T.String({ pattern: "^http://[^/\\s@]+:[0-9]{1,5}/?$" })),
  DISCOVERY_ALLOW_PRIVATE: T.Boolean({ default: false }),
  DISCOVERY_PROXY_RESOLVES: T.Boolean({ default: false }),
  DISCOVERY_CA_FILE: T.Optional(T.String({ minLength: 1 })),
  DISCOVERY_DOH_URL: T.Optional(T.String({ pattern: "^https?://[^\\s]+$" })),
  DISCOVERY_VMC_ROOTS: T.Optional(T.String({ minLength: 1 })),
  DISCOVERY_REFRESH_DAYS: T.Integer({ minimum: 0, maximum: 365, default: 30 }),
  DISCOVERY_WORKERS: T.Integer({ minimum: 1, maximum: 64, default: 4 }),
  DISCOVERY_QUEUE: T.Integer({ minimum: 1, maximum: 100_000, default: 1000 }),
});

export type Config = Static<typeof Env>;

export class ConfigError extends Error {}

const NUMERIC = new Set(
  Object.entries(Env.properties)
    .filter(([, s]) => (s as { type?: string }).type === "integer")
    .map(([k]) => k),
);
const BOOLEAN = new Set([
  "TRUST_PROXY",
  "VISITOR_COUNTER_ENABLED",
  "DISCOVERY",
  "DISCOVERY_ALLOW_PRIVATE",
  "DISCOVERY_PROXY_RESOLVES",
]);

/** Parse config from an env-like record. Throws ConfigError("VAR: reason") on the first bad value. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(Env.properties)) {
    const value = env[key];
    if (value === undefined || value === "") continue;
    if (NUMERIC.has(key)) raw[key] = /^-?\d+$/.test(value.trim()) ? Number(value) : value;
    else if (BOOLEAN.has(key)) {
      const v = value.trim().toLowerCase();
      raw[key] = ["1", "true", "yes", "on"].includes(v)
        ? true
        : ["0", "false", "no", "off"].includes(v)
          ? false
          : value;
    } else raw[key] = value;
  }
  const withDefaults = Value.Default(Env, raw);
  const first = Value.Errors(Env, withDefaults).First();
  if (first) {
    const name = first.path.replace(/^\//, "") || "environment";
    throw new ConfigError(`${name}: ${first.message} (got ${JSON.stringify(raw[name])})`);
  }
  if (raw.UPSTASH_REDIS_REST_URL && !raw.UPSTASH_REDIS_REST_TOKEN)
    throw new ConfigError("UPSTASH_REDIS_REST_TOKEN: required when UPSTASH_REDIS_REST_URL is set");
  if (raw.STRIPE_SECRET_KEY && !raw.STRIPE_PRICE_PRO)
    throw new ConfigError("STRIPE_PRICE_PRO: required when STRIPE_SECRET_KEY is set");
  if (typeof raw.JWT_PRIVATE_KEY === "string") {
    let key: ReturnType<typeof createPrivateKey> | null = null;
    try {
      key = createPrivateKey(raw.JWT_PRIVATE_KEY.replaceAll("\\n", "\n"));
    } catch {}
    const curve = key?.asymmetricKeyDetails?.namedCurve;
    if (key?.asymmetricKeyType !== "ed25519" && curve !== "prime256v1")
      throw new ConfigError("JWT_PRIVATE_KEY: not a PKCS#8 PEM Ed25519 or P-256 private key");
  }
  if (typeof raw.ADMIN_TOKENS === "string") {
    const pairs = raw.ADMIN_TOKENS.split(",").map((p) => p.trim());
    const names = pairs.map((p) => p.slice(0, p.indexOf(":")));
    const tokens = [...pairs.map((p) => p.slice(p.indexOf(":") + 1)), raw.ADMIN_TOKEN];
    if (new Set(names).size !== names.length)
      throw new ConfigError("ADMIN_TOKENS: each operator name must be unique");
    if (new Set(tokens.filter(Boolean)).size !== tokens.filter(Boolean).length)
      throw new ConfigError(
        "ADMIN_TOKENS: each token must be unique (and differ from ADMIN_TOKEN)",
      );
  }
  if (raw.MONGODB_URL && !raw.JWT_SECRET && !raw.JWT_PRIVATE_KEY)
    throw new ConfigError(
      "JWT_SECRET: required (or JWT_PRIVATE_KEY) when MONGODB_URL is set, so every instance signs and verifies the same tokens",
    );
  const config = withDefaults as Config;
  config.PUBLIC_URL = (config.PUBLIC_URL ?? `http://localhost:${config.PORT}`).replace(/\/+$/, "");
  return config;
}
