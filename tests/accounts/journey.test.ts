import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DB_FILE } from "../../src/store/embedded/db";
import { expectError } from "../support/errors";
import { type AuthTestApp, filesUnder, makeAuthApp, PASSWORD, type Pair } from "./helpers";

// argon2id hashing is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

let t: AuthTestApp;
beforeAll(async () => {
  t = await makeAuthApp();
});
afterAll(() => t.close());

/** The whole self-service journey over HTTP, as a developer would walk it. */
test("register, use the key, verify, log in, bearer, refresh, regenerate, reset, delete", async () => {
  const email = "Dev.Journey@Example.com";

  // register: the key is shown once and works at once
  const reg = await t.register(email);
  expect(reg).toMatchObject({ email, tier: "free", emailVerified: false });
  expect(reg.apiKey).toStartWith(`bak_${reg.keyId}_`);
  expect((await t.get("/v1/catalog/github", reg.apiKey)).status).toBe(200);

  // verify from the outbox (one RFC 822 file per message)
  const mail = t.outbox().at(-1) as string;
  expect(mail).toMatch(/^To: Dev\.Journey@Example\.com\r?$/im);
  expect(mail).toMatch(/^Subject: .*(confirm|verif)/im);
  expect(mail).toContain("http://localhost:3000/verify-email?token=");
  const verifyToken = t.lastToken(email, "verify-email");
  const verified = await t.json("/auth/verify-email", { token: verifyToken });
  expect(verified.status).toBe(200);
  expect(await verified.json()).toEqual({ emailVerified: true });
  await expectError(
    await t.json("/auth/verify-email", { token: verifyToken }),
    400,
    "invalid_token",
  );

  // log in (address compared case-insensitively)
  const pair = await t.login("dev.journey@example.com");
  expect(pair.tokenType).toBe("Bearer");
  expect(pair.expiresIn).toBe(900);
  const me = await t.bearer("/auth/me", pair.accessToken);
  expect(me.status).toBe(200);
  const meBody = (await me.json()) as Record<string, unknown>;
  expect(meBody).toMatchObject({
    accountId: reg.accountId,
    email,
    tier: "free",
    emailVerified: true,
  });
  expect(meBody.keys).toEqual([
    { keyId: reg.keyId, prefix: reg.apiKey.slice(0, 24), createdAt: expect.any(String) },
  ]);
  expect(JSON.stringify(meBody)).not.toContain(reg.apiKey);

  // bearer on the usage routes, refused on the catalog
  const usage = await t.bearer("/v1/usage", pair.accessToken);
  expect(usage.status).toBe(200);
  expect(
    ((await usage.json()) as { endpoints: { catalog: { used: number } } }).endpoints.catalog.used,
  ).toBe(1);
  expect((await t.bearer("/v1/analytics/usage", pair.accessToken)).status).toBe(200);
  const catalog = await t.bearer("/v1/catalog/github", pair.accessToken);
  expect(catalog.status).toBe(401);
  expect(((await catalog.json()) as { error: string }).error).toBe("invalid_api_key");

  // refresh rotates; reusing the rotated token revokes the whole family
  const r1 = await t.json("/auth/refresh", { refreshToken: pair.refreshToken });
  expect(r1.status).toBe(200);
  const pair2 = (await r1.json()) as Pair;
  expect(pair2.refreshToken).not.toBe(pair.refreshToken);
  expect((await t.bearer("/auth/me", pair2.accessToken)).status).toBe(200);
  const reuse = await t.json("/auth/refresh", { refreshToken: pair.refreshToken });
  expect(reuse.status).toBe(401);
  expect(((await reuse.json()) as { error: string }).error).toBe("invalid_token");
  await expectError(
    await t.json("/auth/refresh", { refreshToken: pair2.refreshToken }),
    401,
    "invalid_token",
  );

  // regenerate: old key refused at once, new one works, today's usage carried over
  const session = await t.login(email);
  const regen = await t.json("/auth/api-key/regenerate", {}, { bearer: session.accessToken });
  expect(regen.status).toBe(201);
  const fresh = (await regen.json()) as { keyId: string; apiKey: string };
  expect(fresh.keyId).not.toBe(reg.keyId);
  const old = await t.get("/v1/catalog/github", reg.apiKey);
  expect(old.status).toBe(401);
  const carried = await t.get("/v1/usage", fresh.apiKey);
  expect(
    ((await carried.json()) as { endpoints: { catalog: { used: number } } }).endpoints.catalog.used,
  ).toBe(1);
  expect((await t.get("/v1/catalog/github", fresh.apiKey)).status).toBe(200);

  // forgot and reset: the old password is refused, refresh tokens are dead
  expect((await t.json("/auth/forgot-password", { email })).status).toBe(202);
  const resetToken = t.lastToken(email, "reset-password");
  const newPassword = "a brand new passphrase";
  const reset = await t.json("/auth/reset-password", { token: resetToken, password: newPassword });
  expect(reset.status).toBe(200);
  await expectError(
    await t.json("/auth/login", { email, password: PASSWORD }),
    401,
    "invalid_credentials",
  );
  await expectError(
    await t.json("/auth/refresh", { refreshToken: session.refreshToken }),
    401,
    "invalid_token",
  );
  await expectError(
    await t.json("/auth/reset-password", { token: resetToken, password: "another one!!" }),
    400,
    "invalid_token",
  );
  const after = await t.login(email, newPassword);

  // delete: a wrong password is refused; then login is refused and the address is gone from disk
  const dataKey = (await t.deps.store.accounts.getDataKey(reg.accountId))?.key as string;
  expect(dataKey).toBeString();
  const wrong = await t.json(
    "/auth/me",
    { password: PASSWORD },
    { method: "DELETE", bearer: after.accessToken },
  );
  await expectError(wrong, 401, "invalid_credentials");
  const del = await t.json(
    "/auth/me",
    { password: newPassword },
    { method: "DELETE", bearer: after.accessToken },
  );
  expect(del.status).toBe(204);
  await expectError(
    await t.json("/auth/login", { email, password: newPassword }),
    401,
    "invalid_credentials",
  );
  await expectError(await t.bearer("/auth/me", after.accessToken), 401, "invalid_api_key");
  await expectError(await t.get("/v1/catalog/github", fresh.apiKey), 401, "invalid_api_key");
  await expectError(
    await t.json("/auth/refresh", { refreshToken: after.refreshToken }),
    401,
    "invalid_token",
  );

  await t.deps.usage.flush();
  const files = filesUnder(t.deps.config.DATA_DIR);
  expect(files.some((f) => f.path.endsWith(DB_FILE))).toBe(true);
  for (const f of files) {
    const text = f.bytes.toString("latin1");
    expect(text.toLowerCase().includes("dev.journey@example.com") ? f.path : "").toBe("");
    expect(text.includes("$argon2id$") ? f.path : "").toBe("");
    // crypto-shredding: no copy of the data key is left in any file (database, WAL, ...)
    expect(text.includes(dataKey) ? f.path : "").toBe("");
  }
  // usage history stays, under the account id only
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const history = await t.deps.store.usage.daily(
    reg.accountId,
    day(Date.now() - 86_400_000),
    day(Date.now()),
  );
  expect(history.reduce((n, r) => n + r.requests, 0)).toBeGreaterThan(0);
  // the address can be registered again, as a new account
  const again = await t.register(email);
  expect(again.accountId).not.toBe(reg.accountId);
});
