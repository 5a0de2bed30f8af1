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
  UPGRADE_URL: T.String({ pattern: "^https?://", default: "https://brandassets.dev/pricing" }),
  UPSTASH_REDIS_REST_URL: T.Optional(T.String({ pattern: "^https?://" })),
  UPSTASH_REDIS_REST_TOKEN: T.Optional(T.String({ minLength: 1 })),
  COUNTER_TIMEOUT_MS: T.Integer({ minimum: 1, maximum: 10000, default: 150 }),
  TRUST_PROXY: T.Boolean({ default: false }),
  KEY_CACHE_TTL_MS: T.Integer({ minimum: 0, maximum: 600000, default: 30000 }),
  RENDER_CACHE_MB: T.Integer({ minimum: 1, maximum: 4096, default: 64 }),
  USAGE_FLUSH_MS: T.Integer({ minimum: 1, maximum: 60000, default: 250 }),
  USAGE_FLUSH_EVENTS: T.Integer({ minimum: 1, maximum: 100000, default: 500 }),
  USAGE_SYNC_MS: T.Integer({ minimum: 0, maximum: 60000, default: 250 }),
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
});

export type Config = Static<typeof Env>;

export class ConfigError extends Error {}

const NUMERIC = new Set(
  Object.entries(Env.properties)
    .filter(([, s]) => (s as { type?: string }).type === "integer")
    .map(([k]) => k),
);
const BOOLEAN = new Set(["TRUST_PROXY"]);

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
  return withDefaults as Config;
}
