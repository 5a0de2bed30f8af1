import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { hashKey } from "../../src/accounts/keys";
import { hostAllowed, requestHost } from "../../src/images/publishable";
import { type AuthTestApp, makeAuthApp, type Pair, type Registered } from "../accounts/helpers";
import { ADMIN_TOKEN } from "../support/app";
import { expectError } from "../support/errors";

// argon2id (register, login) is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

let t: AuthTestApp;
let reg: Registered;
let session: Pair;

beforeAll(async () => {
  t = await makeAuthApp();
  reg = await t.register("pk-owner@example.com");
  session = await t.login("pk-owner@example.com");
});
afterAll(() => t.close());

interface NewPk {
  keyId: string;
  publishableKey: string;
  prefix: string;
  origins: string[];
  dailyCap: number | null;
  revokedAt: string | null;
}

async function createPk(body: unknown, token = session.accessToken): Promise<NewPk> {
  const r = await t.json("/auth/publishable-keys", body, { bearer: token });
  expect(r.status).toBe(201);
  return (await r.json()) as NewPk;
}

const img = (pk: string, headers: Record<string, string>, file = "github.png", q = "size=32") =>
  t.req(`/i/${file}?${q}&key=${pk}`, { headers });
const codeOf = async (r: Response) => ((await r.json()) as { error: string }).error;

describe("publishable keys on /i/", () => {
  test("created for allowed origins, stored hashed, answered once", async () => {
    const pk = await createPk({ origins: ["*.example.com", "localhost:5173"] });
    expect(pk.publishableKey).toMatch(/^pk_[0-9a-f]{16}_[\w-]{32}$/);
    expect(pk.origins).toEqual(["*.example.com", "localhost:5173"]);
    expect(pk.dailyCap).toBeNull();
    const account = await t.deps.store.accounts.getAccount(reg.accountId);
    const stored = account?.publishableKeys?.find((k) => k.id === pk.keyId);
    expect(stored?.hash).toBe(hashKey(pk.publishableKey));
    expect(JSON.stringify(await t.deps.store.accounts.events(reg.accountId))).not.toContain(
      pk.publishableKey,
    );
    const list = await t.bearer("/auth/publishable-keys", session.accessToken);
    const listed = ((await list.json()) as { keys: NewPk[] }).keys;
    expect(listed.map((k) => k.keyId)).toContain(pk.keyId);
    expect(JSON.stringify(listed)).not.toContain(pk.publishableKey);
  });

  test("allowed origins get the image; Referer counts when Origin is absent", async () => {
    const pk = (await createPk({ origins: ["*.example.com", "localhost:5173"] })).publishableKey;
    const allowed: Record<string, string>[] = [
      { origin: "https://app.example.com" },
      { origin: "https://a.b.example.com" },
      { referer: "https://www.example.com/pricing?x=1" },
      { origin: "http://localhost:5173" },
    ];
    for (const headers of allowed) {
      const r = await img(pk, headers);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("image/png");
      expect(r.headers.get("cache-control")).toBe("private, max-age=86400");
      expect(r.headers.get("etag")).toMatch(/^"/);
    }
  });

  test("a foreign, missing or opaque origin: 403 origin_not_allowed in the error shape", async () => {
    const pk = (await createPk({ origins: ["*.example.com", "localhost:5173"] })).publishableKey;
    const foreign: Record<string, string>[] = [
      { origin: "https://evil.test" },
      { origin: "https://example.com" }, // the apex is not a subdomain
      { origin: "https://example.com.evil.test" },
      { origin: "https://notexample.com" },
      { origin: "http://localhost:3000" }, // another port
      { origin: "null" },
      { referer: "https://evil.test/page" },
      {},
    ];
    for (const headers of foreign) {
      const r = await img(pk, headers);
      expect(r.status).toBe(403);
      const body = (await r.json()) as { error: string; message: string };
      expect(body.error).toBe("origin_not_allowed");
      expect(body.message.length).toBeGreaterThan(10);
    }
  });

  test("an unknown or revoked key is 401; a pk_ key is refused on the X-API-Key routes", async () => {
    const pk = await createPk({ origins: ["app.example.com"] });
    const origin = { origin: "https://app.example.com" };
    expect((await img(pk.publishableKey, origin)).status).toBe(200);
    await expectError(await t.get("/v1/png/github", pk.publishableKey), 401, "invalid_api_key");
    const wrong = `${pk.publishableKey.slice(0, -4)}AAAA`;
    expect(await codeOf(await img(wrong, origin))).toBe("invalid_api_key");
    const del = await t.req(`/auth/publishable-keys/${pk.keyId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${session.accessToken}` },
    });
    expect(del.status).toBe(200);
    expect(((await del.json()) as NewPk).revokedAt).toEqual(expect.any(String));
    const r = await img(pk.publishableKey, origin);
    expect(r.status).toBe(401);
    expect(await codeOf(r)).toBe("invalid_api_key");
  });

  test("charged to the account's buckets, with the key's own daily cap on top", async () => {
    const capped = await createPk({ origins: ["app.example.com"], dailyCap: 2 });
    const origin = { origin: "https://app.example.com" };
    const header = await t.get("/v1/webp/github?size=32", reg.apiKey);
    const left = Number(header.headers.get("x-ratelimit-remaining"));
    const first = await img(capped.publishableKey, origin, "github.webp");
    expect(first.status).toBe(200);
    expect(Number(first.headers.get("x-ratelimit-remaining"))).toBe(left - 1);
    expect((await img(capped.publishableKey, origin, "github.webp")).status).toBe(200);
    const third = await img(capped.publishableKey, origin, "github.webp");
    expect(third.status).toBe(429);
    const body = (await third.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: "rate_limit_exceeded", upgrade_url: expect.any(String) });
    expect(String(body.message)).toContain("Daily cap of 2");
    // the account's own key is not affected by the publishable key's cap
    const after = await t.get("/v1/webp/github?size=32", reg.apiKey);
    expect(Number(after.headers.get("x-ratelimit-remaining"))).toBe(left - 3);
  });

  test("the account's daily limit stops publishable requests too", async () => {
    const owner = await t.register("pk-quota@example.com");
    const s = await t.login("pk-quota@example.com");
    const pk = (await createPk({ origins: ["app.example.com"] }, s.accessToken)).publishableKey;
    // a free account has 50 svg requests a day
    for (let i = 0; i < 49; i++)
      expect((await t.get("/v1/svg/github", owner.apiKey)).status).toBe(200);
    const origin = { origin: "https://app.example.com" };
    expect((await img(pk, origin, "github.svg", "")).status).toBe(200);
    const refused = await img(pk, origin, "github.svg", "");
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toContain(
      "Daily limit of 50 svg",
    );
  });

  test("bad origins are 422; the operator creates and revokes keys and sees them", async () => {
    for (const origins of [[], ["https://example.com"], ["*.*.example.com"], ["Example.com"]]) {
      const r = await t.json(
        "/auth/publishable-keys",
        { origins },
        { bearer: session.accessToken },
      );
      expect(r.status).toBe(422);
    }
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const made = await t.json(
      `/admin/accounts/${reg.accountId}/publishable-keys`,
      { origins: ["shop.example.org"], dailyCap: 100 },
      { headers: admin },
    );
    expect(made.status).toBe(201);
    const pk = (await made.json()) as NewPk;
    const view = await t.req(`/admin/accounts/${reg.accountId}`, { headers: admin });
    const account = (await view.json()) as { publishableKeys: NewPk[] };
    expect(account.publishableKeys.find((k) => k.keyId === pk.keyId)?.dailyCap).toBe(100);
    const revoked = await t.req(`/admin/publishable-keys/${pk.keyId}`, {
      method: "DELETE",
      headers: admin,
    });
    expect(revoked.status).toBe(200);
    const unknown = await t.req("/admin/publishable-keys/ffffffffffffffff", {
      method: "DELETE",
      headers: admin,
    });
    expect(unknown.status).toBe(404);
  });

  test("deleting the account stops its publishable keys", async () => {
    await t.register("pk-gone@example.com");
    const s = await t.login("pk-gone@example.com");
    const pk = (await createPk({ origins: ["app.example.com"] }, s.accessToken)).publishableKey;
    const origin = { origin: "https://app.example.com" };
    expect((await img(pk, origin)).status).toBe(200);
    const del = await t.json(
      "/auth/me",
      { password: "correct horse battery" },
      { method: "DELETE", bearer: s.accessToken },
    );
    expect(del.status).toBe(204);
    await expectError(await img(pk, origin), 401, "invalid_api_key");
  });
});

describe("origin matching", () => {
  test("host patterns", () => {
    const h = (headers: Record<string, string>) => requestHost(new Headers(headers));
    expect(h({ origin: "https://App.Example.com" })).toBe("app.example.com");
    expect(h({ origin: "http://localhost:5173" })).toBe("localhost:5173");
    expect(h({ referer: "https://x.example.com/a/b" })).toBe("x.example.com");
    expect(h({ origin: "null", referer: "https://x.example.com/" })).toBe("x.example.com");
    expect(h({ origin: "file:///tmp/a.html" })).toBeNull();
    expect(h({})).toBeNull();
    expect(hostAllowed("app.example.com:8443", ["app.example.com"])).toBe(true);
    expect(hostAllowed("app.example.com:8443", ["app.example.com:443"])).toBe(false);
    expect(hostAllowed("example.com", ["*.example.com"])).toBe(false);
    expect(hostAllowed("xexample.com", ["*.example.com"])).toBe(false);
  });
});
