/**
 * Signed image URLs: per-key signing secrets, issuing and verifying signatures. Plain TS.
 *
 * The signing secret of an API key is HMAC-SHA256(server secret, "image-url:" + keyId), where
 * the server secret is a random value created once per deployment in the account store
 * (`serverSecret("image-url-signing")`, shared by every instance). It is never stored: it is
 * derived again when needed, so it lives exactly as long as its key id. A URL names its key by
 * `kid` (the key id): regenerating the key (a new key id, the old one revoked) or deleting the
 * account stops every URL it signed, and a signature made with another key's secret fails.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import {
  base64url,
  canonicalText,
  fromBase64url,
  MAX_URL_TTL_SECONDS,
  signingKey,
  signPath,
  signText,
} from "../../packages/client/src/signing";
import type { Principal } from "../accounts/model";
import type { AccountService } from "../accounts/service";
import { ApiError } from "../http/errors";

export const SERVER_SECRET_NAME = "image-url-signing";

const KID = /^[0-9a-f]{16}$/;
const SIG = /^[A-Za-z0-9_-]{43}$/;
const EXP = /^\d{1,12}$/;

export const forbidden = (code: string, message: string) => new ApiError(403, code, message);

const badSignature = () =>
  forbidden(
    "invalid_signature",
    "The image URL's signature does not match its parameters. Sign every parameter with the key named by kid (POST /v1/image-urls).",
  );

/** Signing secrets and keys per key id, HMAC keys imported once (bounded map). */
export class ImageSigner {
  private keys = new Map<string, CryptoKey>();

  constructor(
    private accounts: AccountService,
    private serverSecret: () => Promise<string>,
    private now: () => number = Date.now,
  ) {}

  /** The signing secret of a key id (base64url, 32 bytes). */
  async secretOf(kid: string): Promise<string> {
    const server = fromBase64url(await this.serverSecret());
    return base64url(createHmac("sha256", server).update(`image-url:${kid}`).digest());
  }

  private async keyOf(kid: string): Promise<CryptoKey> {
    let key = this.keys.get(kid);
    if (!key) {
      key = await signingKey(await this.secretOf(kid));
      if (this.keys.size > 10_000) this.keys.clear();
      this.keys.set(kid, key);
    }
    return key;
  }

  /** A signed `/i/...` path and query; `exp` in unix seconds. */
  async sign(kid: string, path: string, params: Record<string, string>, exp: number) {
    return signPath(await this.keyOf(kid), path, params, exp, kid);
  }

  /**
   * The principal a signed URL is charged to: its signature (constant-time comparison), then
   * `exp` (not past, at most MAX_URL_TTL_SECONDS ahead), then its key (active, account not
   * deleted). A bad or expired signature is refused before any store is asked.
   */
  async verify(path: string, params: Map<string, string>): Promise<Principal> {
    const kid = params.get("kid") ?? "";
    const sig = params.get("sig") ?? "";
    const exp = params.get("exp") ?? "";
    if (!KID.test(kid) || !SIG.test(sig) || !EXP.test(exp)) throw badSignature();
    const signed = [...params].filter(([k]) => k !== "sig");
    const expected = await signText(await this.keyOf(kid), canonicalText(path, signed));
    const given = Buffer.from(fromBase64url(sig));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badSignature();
    const nowSeconds = Math.floor(this.now() / 1000);
    if (Number(exp) < nowSeconds)
      throw forbidden("url_expired", "This image URL has expired; issue a new one.");
    if (Number(exp) > nowSeconds + MAX_URL_TTL_SECONDS + 300)
      throw forbidden(
        "invalid_signature",
        `exp is more than ${MAX_URL_TTL_SECONDS / 86_400} days ahead; signed URLs live 30 days at most.`,
      );
    const principal = await this.accounts.principalOfKeyId(kid);
    if (!principal)
      throw forbidden(
        "url_revoked",
        "The key that signed this image URL was regenerated or deleted; issue a new URL.",
      );
    return principal;
  }
}
