import { createHash } from "node:crypto";

const bunSha256 = (
  globalThis as { Bun?: { SHA256?: { hash(input: string, encoding: "hex"): string } } }
).Bun?.SHA256;

/**
 * SHA-256 of a UTF-8 string as lowercase hex. On Bun, its native one-shot hasher (about 4x
 * faster than node:crypto's createHash: one per API-key check); elsewhere node:crypto.
 */
export const sha256Hex: (input: string) => string = bunSha256
  ? (input) => bunSha256.hash(input, "hex")
  : (input) => createHash("sha256").update(input).digest("hex");
