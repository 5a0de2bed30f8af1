import { describe, expect, test } from "bun:test";
import {
  apiKeyOf,
  authenticate,
  bearerOf,
  type CredentialDeps,
  hasBearerToken,
} from "../../src/guard/credentials";
import type { ApiError } from "../../src/http/errors";
import type { Principal } from "../../src/quota/principal";

const caller = (accountId: string) => ({ accountId }) as Principal;
const KEY = "bak_key1_secret";
const deps: CredentialDeps = {
  accounts: { verifyKey: async (k) => (k === KEY ? caller("by-key") : null) },
  verifyBearer: async (t) => (t === "jwt-ok" ? caller("by-token") : null),
};
const headers = (h: Record<string, string>) => new Headers(h);
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: ApiError) => [e.status, e.code],
  );

describe("credentials: one parser for X-API-Key and Authorization: Bearer", () => {
  test("reads the key and the bearer token, trimmed, and nothing else", () => {
    expect(apiKeyOf(headers({ "x-api-key": `  ${KEY} ` }))).toBe(KEY);
    expect(apiKeyOf(headers({ "x-api-key": "   " }))).toBeUndefined();
    expect(bearerOf(headers({ authorization: "Bearer  abc " }))).toBe("abc");
    expect(bearerOf(headers({ authorization: "bearer\tabc" }))).toBe("abc");
    expect(bearerOf(headers({ authorization: "Basic abc" }))).toBeUndefined();
    expect(bearerOf(headers({ authorization: "Bearer " }))).toBeUndefined();
  });

  test("each bearer policy takes what it names, and refuses the rest with 401", async () => {
    const key = headers({ "x-api-key": KEY });
    const jwt = headers({ authorization: "Bearer jwt-ok" });
    const keyAsBearer = headers({ authorization: `Bearer ${KEY}` });
    expect((await authenticate(deps, key, "none")).accountId).toBe("by-key");
    expect(await refusal(authenticate(deps, jwt, "none"))).toEqual([401, "invalid_api_key"]);
    expect((await authenticate(deps, jwt, "token")).accountId).toBe("by-token");
    expect(await refusal(authenticate(deps, keyAsBearer, "token"))).toEqual([
      401,
      "invalid_api_key",
    ]);
    expect((await authenticate(deps, keyAsBearer, "token-or-key")).accountId).toBe("by-key");
    expect((await authenticate(deps, jwt, "token-or-key")).accountId).toBe("by-token");
    // a wrong key is refused even when a valid bearer comes with it
    const both = headers({ "x-api-key": "bak_wrong", authorization: "Bearer jwt-ok" });
    expect(await refusal(authenticate(deps, both, "token"))).toEqual([401, "invalid_api_key"]);
  });

  test("an operator token must match exactly", () => {
    const req = (auth?: string) =>
      new Request("http://x/", { headers: auth ? { authorization: auth } : {} });
    expect(hasBearerToken(req("Bearer s3cret-token"), "s3cret-token")).toBe(true);
    expect(hasBearerToken(req("Bearer s3cret-toke"), "s3cret-token")).toBe(false);
    expect(hasBearerToken(req("s3cret-token"), "s3cret-token")).toBe(false);
    expect(hasBearerToken(req(), "s3cret-token")).toBe(false);
  });
});
