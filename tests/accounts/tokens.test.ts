import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import { createLocalJWKSet, decodeJwt, jwtVerify, SignJWT } from "jose";
import { ConfigError, loadConfig } from "../../src/config";
import { DB_FILE } from "../../src/store/embedded/db";
import { CATALOG_FILE, tempDir } from "../support/app";
import { expectError } from "../support/errors";
import { type AuthTestApp, makeAuthApp } from "./helpers";

// argon2id hashing is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

const SECRET = "an-hs256-secret-of-at-least-32-characters!";
const ISS = "brand-asset-api";
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
const nowS = () => Math.floor(Date.now() / 1000);

async function expectRefused(t: AuthTestApp, token: string) {
  for (const path of ["/v1/usage", "/v1/analytics/usage", "/auth/me"]) {
    const r = await t.bearer(path, token);
    expect(`${path} ${r.status}`).toBe(`${path} 401`);
    expect(((await r.json()) as { error: string }).error).toBe("invalid_api_key");
  }
}

describe("HS256 (JWT_SECRET)", () => {
  let t: AuthTestApp;
  let accountId: string;
  let valid: string;
  beforeAll(async () => {
    t = await makeAuthApp({ JWT_SECRET: SECRET });
    accountId = (await t.register("hs@example.com")).accountId;
    valid = (await t.login("hs@example.com")).accessToken;
  });
  afterAll(() => t.close());

  const sign = (
    claims: { iss?: string; aud?: string },
    secret = SECRET,
    exp: number | string = "5m",
  ) =>
    new SignJWT({ tier: "free" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(accountId)
      .setIssuer(claims.iss ?? ISS)
      .setAudience(claims.aud ?? ISS)
      .setIssuedAt()
      .setJti(crypto.randomUUID())
      .setExpirationTime(exp)
      .sign(new TextEncoder().encode(secret));

  test("a token from login carries sub, tier, iat, exp, jti, iss and aud, and is accepted", async () => {
    const claims = decodeJwt(valid);
    expect(claims).toMatchObject({ sub: accountId, tier: "free", iss: ISS, aud: ISS });
    expect((claims.exp as number) - (claims.iat as number)).toBe(900);
    expect(typeof claims.jti).toBe("string");
    expect((await t.bearer("/auth/me", valid)).status).toBe(200);
    // a token signed with the same secret and claims is accepted (so the refusals below are real)
    expect((await t.bearer("/auth/me", await sign({}))).status).toBe(200);
  });

  test("alg none is refused", async () => {
    const payload = decodeJwt(valid);
    await expectRefused(t, `${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.`);
  });

  test("a token signed with another secret is refused", async () => {
    await expectRefused(t, await sign({}, "another-secret-that-is-also-32-chars-long"));
  });

  test("a tampered payload is refused", async () => {
    const [h, , s] = valid.split(".");
    await expectRefused(t, `${h}.${b64({ ...decodeJwt(valid), tier: "enterprise" })}.${s}`);
  });

  test("an expired token is refused beyond 30 s of skew, accepted within it", async () => {
    await expectRefused(t, await sign({}, SECRET, nowS() - 45));
    expect((await t.bearer("/auth/me", await sign({}, SECRET, nowS() - 10))).status).toBe(200);
  });

  test("another issuer or audience is refused", async () => {
    await expectRefused(t, await sign({ iss: "someone-else" }));
    await expectRefused(t, await sign({ aud: "someone-else" }));
  });

  test("the JWKS is empty: the secret is never published", async () => {
    const r = await t.req("/.well-known/jwks.json");
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ keys: [] });
  });

  test("a bearer token alone is refused on catalog, search, brand and asset routes", async () => {
    for (const path of [
      "/v1/catalog",
      "/v1/catalog/github",
      "/v1/search?q=github",
      "/v1/brand?domain=github.com",
      "/v1/svg/github",
      "/v1/png/github",
      "/v1/webp/github",
    ]) {
      const r = await t.bearer(path, valid);
      expect(`${path} ${r.status}`).toBe(`${path} 401`);
      expect(((await r.json()) as { error: string }).error).toBe("invalid_api_key");
    }
    const batch = await t.json("/v1/catalog/batch", { slugs: ["github"] }, { bearer: valid });
    await expectError(batch, 401, "invalid_api_key");
  });

  test("X-API-Key is not accepted where a bearer token is required", async () => {
    const { apiKey } = await t.register("keyonly@example.com");
    const r = await t.get("/auth/me", apiKey);
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: string }).error).toBe("invalid_api_key");
  });
});

describe.each([
  ["EdDSA", () => generateKeyPairSync("ed25519"), "OKP"],
  ["ES256", () => generateKeyPairSync("ec", { namedCurve: "P-256" }), "EC"],
] as const)("%s (JWT_PRIVATE_KEY)", (alg, keyPair, kty) => {
  let t: AuthTestApp;
  let valid: string;
  const { privateKey, publicKey } = keyPair();
  beforeAll(async () => {
    t = await makeAuthApp({
      JWT_PRIVATE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    });
    await t.register(`${alg}@example.com`);
    valid = (await t.login(`${alg}@example.com`)).accessToken;
  });
  afterAll(() => t.close());

  test("the public key is served at /.well-known/jwks.json and verifies issued tokens", async () => {
    const r = await t.req("/.well-known/jwks.json");
    const text = await r.text();
    const jwks = JSON.parse(text) as { keys: Record<string, string>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty, alg, use: "sig", kid: expect.any(String) });
    expect(jwks.keys[0]?.d).toBeUndefined();
    const { protectedHeader } = await jwtVerify(valid, createLocalJWKSet(JSON.parse(text)), {
      issuer: ISS,
      audience: ISS,
    });
    expect(protectedHeader.alg).toBe(alg);
    expect((await t.bearer("/v1/usage", valid)).status).toBe(200);
  });

  test("an HS256 token signed with the public key is refused", async () => {
    const claims = decodeJwt(valid);
    const pem = publicKey.export({ type: "spki", format: "pem" }) as string;
    const jwk = JSON.stringify(publicKey.export({ format: "jwk" }));
    for (const secret of [pem, jwk]) {
      const forged = await new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256" })
        .sign(new TextEncoder().encode(secret));
      await expectRefused(t, forged);
    }
  });

  test("alg none is refused", async () => {
    await expectRefused(t, `${b64({ alg: "none" })}.${b64(decodeJwt(valid))}.`);
  });
});

describe("the signing secret", () => {
  test("embedded without JWT_SECRET: generated once into the database (mode 0600), kept across restarts", async () => {
    const dataDir = tempDir();
    const first = await makeAuthApp({ DATA_DIR: dataDir });
    await first.register("restart@example.com");
    const pair = await first.login("restart@example.com");
    for (const f of [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`])
      expect({ f, mode: statSync(join(dataDir, f)).mode & 0o777 }).toEqual({ f, mode: 0o600 });
    await first.deps.close();
    const second = await makeAuthApp({ DATA_DIR: dataDir });
    expect((await second.bearer("/auth/me", pair.accessToken)).status).toBe(200);
    expect((await second.json("/auth/refresh", { refreshToken: pair.refreshToken })).status).toBe(
      200,
    );
    await second.close();
  });

  test("with MONGODB_URL, a missing JWT_SECRET and JWT_PRIVATE_KEY is a configuration error", () => {
    const env = { CATALOG_FILE, MONGODB_URL: "mongodb://localhost:27017" };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/JWT_SECRET/);
    expect(loadConfig({ ...env, JWT_SECRET: SECRET }).JWT_SECRET).toBe(SECRET);
  });

  test("JWT settings are validated", () => {
    expect(() => loadConfig({ JWT_SECRET: "too-short" })).toThrow(/JWT_SECRET/);
    expect(() => loadConfig({ JWT_PRIVATE_KEY: "not a pem" })).toThrow(/JWT_PRIVATE_KEY/);
    const broken = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----";
    expect(() => loadConfig({ JWT_PRIVATE_KEY: broken })).toThrow(ConfigError);
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey;
    const rsaPem = rsa.export({ type: "pkcs8", format: "pem" }) as string;
    expect(() => loadConfig({ JWT_PRIVATE_KEY: rsaPem })).toThrow(/Ed25519 or P-256/);
    // one-line env files: \n escapes
    const ed = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" });
    const oneLine = (ed as string).trim().replaceAll("\n", "\\n");
    expect(loadConfig({ JWT_PRIVATE_KEY: oneLine }).JWT_PRIVATE_KEY).toBe(oneLine);
    expect(() => loadConfig({ JWT_ACCESS_TTL: "10" })).toThrow(/JWT_ACCESS_TTL/);
    expect(() => loadConfig({ PUBLIC_URL: "ftp://x" })).toThrow(/PUBLIC_URL/);
    expect(() => loadConfig({ SMTP_URL: "http://x" })).toThrow(/SMTP_URL/);
    expect(loadConfig({}).JWT_ACCESS_TTL).toBe(900);
  });
});
