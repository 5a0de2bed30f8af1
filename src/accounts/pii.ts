import { createHmac, randomBytes } from "node:crypto";

/**
 * Crypto-shredding of personal data. Each self-registered account has its own random AES-256-GCM
 * data key, kept outside the append-only log (AccountStore.putDataKey) and destroyed when the
 * account is deleted. Its e-mail address and password hash enter the log only sealed with that
 * key (the account id is the additional authenticated data, so a sealed value cannot be moved to
 * another account). Once the key is gone, the log still replays but nothing in it can be read.
 */
const VERSION = "v1";

export const newDataKey = (): string => randomBytes(32).toString("base64url");

const importKey = (key: string) =>
  crypto.subtle.importKey("raw", Buffer.from(key, "base64url"), "AES-GCM", false, [
    "encrypt",
    "decrypt",
  ]);

/** `v1.<iv>.<ciphertext+tag>` (base64url) */
export async function seal(key: string, accountId: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(accountId) },
    await importKey(key),
    new TextEncoder().encode(plaintext),
  );
  return `${VERSION}.${Buffer.from(iv).toString("base64url")}.${Buffer.from(ct).toString("base64url")}`;
}

/** The plaintext of a sealed value; throws when the key or account does not match. */
export async function unseal(key: string, accountId: string, sealed: string): Promise<string> {
  const [version, iv, ct] = sealed.split(".");
  if (version !== VERSION || !iv || !ct) throw new Error("not a sealed value");
  const plain = await crypto.subtle.decrypt(
    {
      name: "AES-GCM",
      iv: Buffer.from(iv, "base64url"),
      additionalData: new TextEncoder().encode(accountId),
    },
    await importKey(key),
    Buffer.from(ct, "base64url"),
  );
  return new TextDecoder().decode(plain);
}

/** Addresses compare case-insensitively and without surrounding spaces. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/**
 * The lookup index of an address: HMAC-SHA256 of the normalized address under a server secret,
 * so login finds the account without decrypting every account, and the index alone does not
 * reveal the address. Deleted with the data key.
 */
export const emailIndex = (secret: string, email: string): string =>
  createHmac("sha256", secret).update(normalizeEmail(email)).digest("hex");
