import { randomBytes, timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../platform/hash";

/**
 * API keys look like `bak_<keyId>_<secret>`: keyId is 16 hex characters (public, used to find
 * the record), secret is 32 base64url characters (192 random bits). Only sha256(key) is stored.
 */
export const KEY_PREFIX = "bak_";
const KEY_RE = /^bak_([0-9a-f]{16})_([A-Za-z0-9_-]{32})$/;

export function generateKey(): { keyId: string; apiKey: string; hash: string; prefix: string } {
  const keyId = randomBytes(8).toString("hex");
  const secret = randomBytes(24).toString("base64url");
  const apiKey = `${KEY_PREFIX}${keyId}_${secret}`;
  return { keyId, apiKey, hash: hashKey(apiKey), prefix: apiKey.slice(0, 24) };
}

/** Publishable keys: `pk_<keyId>_<secret>`, same shape and storage (hash only) as API keys. */
export const PUBLISHABLE_PREFIX = "pk_";
const PUBLISHABLE_RE = /^pk_([0-9a-f]{16})_([A-Za-z0-9_-]{32})$/;

export function generatePublishableKey() {
  const keyId = randomBytes(8).toString("hex");
  const key = `${PUBLISHABLE_PREFIX}${keyId}_${randomBytes(24).toString("base64url")}`;
  return { keyId, key, hash: hashKey(key), prefix: key.slice(0, 23) };
}

/** The key id of a well-formed publishable key, or null. */
export function parsePublishableKeyId(key: string): string | null {
  const m = PUBLISHABLE_RE.exec(key);
  return m ? (m[1] as string) : null;
}

export const hashKey = (apiKey: string): string => sha256Hex(apiKey);

/** The key id of a well-formed key, or null. */
export function parseKeyId(apiKey: string): string | null {
  const m = KEY_RE.exec(apiKey);
  return m ? (m[1] as string) : null;
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
