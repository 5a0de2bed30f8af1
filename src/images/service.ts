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
  type Mac,
  signPath,
} from "../../packages/client/src/signing";
import type { AccountService } from "../accounts/service";
import { forbidden } from "../platform/domain-errors";
import type { Principal } from "../quota/principal";

export const SERVER_SECRET_NAME = "image-url-signing";

const KID = /^[0-9a-f]{16}$/;
const SIG = /^[A-Za-z0-9_-]{43}$/;
const EXP = /^\d{1,12}$/;

const badSignature = () =>
  forbidden(
    "invalid_signature",
    "The image URL's signature does not match its parameters. Sign every parameter with the key named by kid (POST /v1/image-urls).",
  );

/**
 * Signing secrets per key id (derived once, bounded map). The server computes HMACs with
 * node:crypto, synchronously (about 1 µs; Web Crypto's sign is asynchronous and costs about
 * 20 µs per call); the client signs the same canonical text with Web Crypto.
 */
export class ImageSigner {
  private secrets = new Map<string, Buffer>();
  private server: Uint8Array | null = null;

  constructor(
    private accounts: AccountService,
    private serverSecret: () => Promise<string>,
    private now: () => number = Date.now,
  ) {}

  /** The signing secret of a key id (base64url, 32 bytes). */
  async secretOf(kid: string): Promise<string> {
    return base64url(await this.secretBytes(kid));
  }

  private async secretBytes(kid: string): Promise<Buffer> {
    const known = this.secrets.get(kid);
    if (known) return known;
    this.server ??= fromBase64url(await this.serverSecret());
    const secret = createHmac("sha256", this.server).update(`image-url:${kid}`).digest();
    if (this.secrets.size > 10_000) this.secrets.clear();
    this.secrets.set(kid, secret);
    return secret;
  }

  private mac(secret: Buffer): Mac {
    return (text) => createHmac("sha256", secret).update(text).digest();
  }

  /** A signed `/i/...` path and query; `exp` in unix seconds. */
  async sign(kid: string, path: string, params: Record<string, string>, exp: number) {
    return signPath(this.mac(await this.secretBytes(kid)), path, params, exp, kid);
  }

  /**
   * The principal a signed URL is charged to: its signature (constant-time comparison), then
   * `exp` (not past, at most MAX_URL_TTL_SECONDS ahead), then its key (active, account not
   * deleted). A bad or expired signature is refused before any store is asked. Synchronous
   * when the key's secret and principal are cached (the hot path awaits nothing).
   */
  verify(path: string, params: Map<string, string>): Principal | Promise<Principal> {
    const kid = params.get("kid") ?? "";
    if (!KID.test(kid)) throw badSignature();
    const secret = this.secrets.get(kid);
    if (!secret) return this.secretBytes(kid).then(() => this.verify(path, params));
    this.checkSignature(path, params, secret);
    const principal = this.accounts.cachedKeyId(kid);
    if (principal) return principal;
    return this.accounts.principalOfKeyId(kid).then((p) => {
      if (!p) throw revoked();
      return p;
    });
  }

  private checkSignature(path: string, params: Map<string, string>, secret: Buffer) {
    const sig = params.get("sig") ?? "";
    const exp = params.get("exp") ?? "";
    if (!SIG.test(sig) || !EXP.test(exp)) throw badSignature();
    const signed = [...params].filter(([k]) => k !== "sig");
    const expected = createHmac("sha256", secret).update(canonicalText(path, signed)).digest();
    const given = Buffer.from(sig, "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badSignature();
    const nowSeconds = Math.floor(this.now() / 1000);
    if (Number(exp) < nowSeconds)
      throw forbidden("url_expired", "This image URL has expired; issue a new one.");
    if (Number(exp) > nowSeconds + MAX_URL_TTL_SECONDS + 300)
      throw forbidden(
        "invalid_signature",
        `exp is more than ${MAX_URL_TTL_SECONDS / 86_400} days ahead; signed URLs live 30 days at most.`,
      );
  }
}

const revoked = () =>
  forbidden(
    "url_revoked",
    "The key that signed this image URL was regenerated or deleted; issue a new URL.",
  );
