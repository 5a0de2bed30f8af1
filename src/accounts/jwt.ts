import { createPrivateKey, createPublicKey, randomBytes, randomUUID } from "node:crypto";
import {
  calculateJwkThumbprint,
  exportJWK,
  type JWK,
  jwtVerify,
  type KeyObject,
  SignJWT,
} from "jose";
import type { Tier } from "../quota/limits";

export type JwtAlg = "HS256" | "EdDSA" | "ES256";

export interface JwtSettings {
  secret?: string;
  privateKeyPem?: string;
  issuer: string;
  audience: string;
  /** access token lifetime, seconds */
  ttlSeconds: number;
}

/** Allowed clock skew when checking exp / iat / nbf. */
export const CLOCK_SKEW_SECONDS = 30;

export interface AccessClaims {
  accountId: string;
  tier: Tier;
  /** issued at, unix seconds */
  iat: number;
}

/**
 * Access tokens: JWTs signed and verified with jose. HS256 with a shared secret, or EdDSA / ES256
 * with a PKCS#8 private key (its public key is served as a JWKS). Verification pins the one
 * algorithm configured and checks signature, exp (with 30 s of skew), iss and aud.
 */
export class AccessTokens {
  private constructor(
    readonly alg: JwtAlg,
    private signKey: Uint8Array | KeyObject,
    private verifyKey: Uint8Array | KeyObject,
    private publicJwk: JWK | null,
    private settings: JwtSettings,
  ) {}

  static async create(settings: JwtSettings): Promise<AccessTokens> {
    if (settings.privateKeyPem) {
      const priv = createPrivateKey(settings.privateKeyPem);
      const type = priv.asymmetricKeyType;
      const curve = priv.asymmetricKeyDetails?.namedCurve;
      const alg: JwtAlg | null =
        type === "ed25519" ? "EdDSA" : type === "ec" && curve === "prime256v1" ? "ES256" : null;
      if (!alg)
        throw new Error("JWT_PRIVATE_KEY must be an Ed25519 or P-256 (ES256) PKCS#8 PEM key");
      const pub = createPublicKey(priv);
      const jwk = await exportJWK(pub);
      const kid = await calculateJwkThumbprint(jwk);
      return new AccessTokens(alg, priv, pub, { ...jwk, kid, alg, use: "sig" }, settings);
    }
    if (!settings.secret || settings.secret.length < 32)
      throw new Error("JWT_SECRET must be at least 32 characters");
    const key = new TextEncoder().encode(settings.secret);
    return new AccessTokens("HS256", key, key, null, settings);
  }

  get ttlSeconds() {
    return this.settings.ttlSeconds;
  }

  async sign(accountId: string, tier: Tier): Promise<string> {
    return new SignJWT({ tier })
      .setProtectedHeader(
        this.publicJwk ? { alg: this.alg, kid: this.publicJwk.kid } : { alg: this.alg },
      )
      .setSubject(accountId)
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setIssuedAt()
      .setExpirationTime(`${this.settings.ttlSeconds}s`)
      .setJti(randomUUID())
      .sign(this.signKey);
  }

  /** The claims of a valid token; null for anything else (never throws). */
  async verify(token: string): Promise<AccessClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.verifyKey, {
        algorithms: [this.alg],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ["sub", "exp", "iat", "jti"],
      });
      if (typeof payload.sub !== "string" || typeof payload.iat !== "number") return null;
      return { accountId: payload.sub, tier: payload.tier as Tier, iat: payload.iat };
    } catch {
      return null;
    }
  }

  /** The JSON Web Key Set of the verification key (empty for HS256: the secret is not public). */
  jwks(): { keys: JWK[] } {
    return { keys: this.publicJwk ? [this.publicJwk] : [] };
  }
}

/** The store's server secret that signs access tokens when no JWT_SECRET is configured. */
export const JWT_SECRET_NAME = "jwt";

/**
 * The signing settings from configuration. Without JWT_SECRET or JWT_PRIVATE_KEY (embedded store
 * only; config.ts refuses it with MONGODB_URL), the store's server secret `jwt` (generated once)
 * signs, so `npm start` needs no setup.
 */
export async function jwtSettings(
  config: {
    JWT_SECRET?: string;
    JWT_PRIVATE_KEY?: string;
    JWT_ISSUER: string;
    JWT_AUDIENCE: string;
    JWT_ACCESS_TTL: number;
  },
  serverSecret: (name: string) => Promise<string>,
): Promise<JwtSettings> {
  const privateKeyPem = config.JWT_PRIVATE_KEY?.replaceAll("\\n", "\n");
  return {
    secret: privateKeyPem
      ? undefined
      : (config.JWT_SECRET ?? (await serverSecret(JWT_SECRET_NAME))),
    privateKeyPem,
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    ttlSeconds: config.JWT_ACCESS_TTL,
  };
}

/** An opaque random token (refresh, verification, reset): prefix + 256 random bits. */
export const randomToken = (prefix: string): string =>
  `${prefix}${randomBytes(32).toString("base64url")}`;
