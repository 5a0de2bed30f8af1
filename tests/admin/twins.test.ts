import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ADMIN_TOKEN, makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";

// spawns processes or builds several apps: slow on a loaded machine (bun's default is 5 s)
setDefaultTimeout(60_000);

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

const admin = (path: string, method = "GET", token: string | null = ADMIN_TOKEN, body?: unknown) =>
  t.req(path, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const createKey = async (body: Record<string, unknown>) =>
  (await (await admin("/admin/keys", "POST", ADMIN_TOKEN, body)).json()) as {
    accountId: string;
    keyId: string;
    apiKey: string;
  };

describe("GET /admin/accounts and /admin/accounts/{id}", () => {
  test("an account with its keys as id, prefix and dates, never a hash or the key", async () => {
    const created = await createKey({ tier: "pro", email: "Ops@Twins.test" });
    const res = await admin(`/admin/accounts/${created.accountId}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown> & {
      keys: Record<string, unknown>[];
    };
    expect(body).toEqual({
      accountId: created.accountId,
      email: "Ops@Twins.test",
      tier: "pro",
      limits: null,
      emailVerified: false,
      createdAt: expect.any(String),
      keys: [
        {
          id: created.keyId,
          prefix: expect.any(String),
          createdAt: expect.any(String),
          revokedAt: null,
        },
      ],
      publishableKeys: [],
    });
    expect(created.apiKey.startsWith(body.keys[0]?.prefix as string)).toBe(true);
    const text = JSON.stringify(body);
    expect(text).not.toContain(created.apiKey);
    expect(text).not.toMatch(/[0-9a-f]{64}/); // no sha256 hash anywhere
    expect(text).not.toContain("hash");
  });

  test("?email= finds the account case-insensitively; the list is oldest first", async () => {
    const a = await createKey({ tier: "free", email: "list-me@twins.test" });
    const b = await createKey({ tier: "free" });
    const found = (await (await admin("/admin/accounts?email=LIST-ME@twins.test")).json()) as {
      accounts: { accountId: string }[];
    };
    expect(found.accounts.map((x) => x.accountId)).toEqual([a.accountId]);
    const none = (await (await admin("/admin/accounts?email=nobody@twins.test")).json()) as {
      accounts: unknown[];
    };
    expect(none.accounts).toEqual([]);
    const all = (await (await admin("/admin/accounts")).json()) as {
      accounts: { accountId: string; createdAt: string }[];
    };
    const ids = all.accounts.map((x) => x.accountId);
    expect(ids.indexOf(a.accountId)).toBeLessThan(ids.indexOf(b.accountId));
    const dates = all.accounts.map((x) => x.createdAt);
    expect([...dates].sort()).toEqual(dates);
  });

  test("unknown account is 404 account_not_found; no token is 401", async () => {
    const missing = await admin("/admin/accounts/no-such-account");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toBe("account_not_found");
    for (const path of ["/admin/accounts", "/admin/accounts/x", "/admin/accounts?email=a@b.c"]) {
      await expectError(await admin(path, "GET", null), 401, "unauthorized");
      await expectError(await admin(path, "GET", "wrong-token-wrong-token"), 401, "unauthorized");
    }
  });
});

describe("DELETE /admin/keys/{keyId}", () => {
  test("revokes the key at once; the account shows when; a second call answers the same", async () => {
    const created = await createKey({ tier: "free" });
    expect((await t.get("/v1/catalog/github", created.apiKey)).status).toBe(200);
    const res = await admin(`/admin/keys/${created.keyId}`, "DELETE");
    expect(res.status).toBe(200);
    const revoked = (await res.json()) as { accountId: string; keyId: string; revokedAt: string };
    expect(revoked).toEqual({
      accountId: created.accountId,
      keyId: created.keyId,
      revokedAt: expect.any(String),
    });
    await expectError(await t.get("/v1/catalog/github", created.apiKey), 401, "invalid_api_key");
    const account = (await (await admin(`/admin/accounts/${created.accountId}`)).json()) as {
      keys: { revokedAt: string | null }[];
    };
    expect(account.keys.map((k) => k.revokedAt)).toEqual([revoked.revokedAt]);
    const again = await admin(`/admin/keys/${created.keyId}`, "DELETE");
    expect(((await again.json()) as { revokedAt: string }).revokedAt).toBe(revoked.revokedAt);
  });

  test("an unknown key is 404 key_not_found; no token is 401 and revokes nothing", async () => {
    const missing = await admin("/admin/keys/0123456789abcdef", "DELETE");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toBe("key_not_found");
    const created = await createKey({ tier: "free" });
    await expectError(
      await admin(`/admin/keys/${created.keyId}`, "DELETE", null),
      401,
      "unauthorized",
    );
    expect((await t.get("/v1/catalog/github", created.apiKey)).status).toBe(200);
  });
});
