import { expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Account, applyAccountEvent } from "../../src/accounts/model";
import { EmbeddedAccountStore } from "../../src/accounts/store/embedded";
import { openEmbeddedStore } from "../../src/deps";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import { CATALOG_FILE, tempDir } from "../support/app";
import { databaseBytes } from "../support/db";
import { expectError } from "../support/errors";
import { makeAuthApp } from "./helpers";

// argon2id hashing is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

test("reopening the database gives the same projection, and a fold of the events is it, for every kind of event", async () => {
  const dataDir = tempDir();
  const t = await makeAuthApp({ DATA_DIR: dataDir });
  const a = await t.register("replay-a@example.com");
  const b = await t.register("replay-b@example.com");
  await t.json("/auth/verify-email", {
    token: t.lastToken("replay-a@example.com", "verify-email"),
  });
  await t.json("/auth/forgot-password", { email: "replay-a@example.com" });
  await t.json("/auth/reset-password", {
    token: t.lastToken("replay-a@example.com", "reset-password"),
    password: "the second password",
  });
  const session = await t.login("replay-a@example.com", "the second password");
  await t.json("/auth/api-key/regenerate", {}, { bearer: session.accessToken });
  await t.deps.accounts.changeTier(a.accountId, "pro", null);
  const pk = await t.deps.accounts.createPublishableKey(a.accountId, ["app.example.com"], 10);
  await t.deps.accounts.revokePublishableKey(a.accountId, pk.id);
  await t.deps.accounts.createPublishableKey(b.accountId, ["*.example.org"], null);
  const bSession = await t.login("replay-b@example.com");
  await t.json(
    "/auth/me",
    { password: "correct horse battery" },
    { method: "DELETE", bearer: bSession.accessToken },
  );
  const before = await Promise.all([a, b].map((r) => t.deps.accounts.getAccount(r.accountId)));
  const events = await t.deps.store.accounts.events(a.accountId);
  expect(events.map((e) => e.type)).toEqual([
    "account.registered",
    "key.issued",
    "email.verified",
    "password.changed",
    "tokens.revoked",
    "key.revoked",
    "key.issued",
    "tier.changed",
    "publishable.issued",
    "publishable.revoked",
  ]);
  await t.deps.close();

  const db = new Database(join(dataDir, DB_FILE));
  const reopened = new EmbeddedAccountStore(db);
  for (const [i, r] of [a, b].entries()) {
    const after = await reopened.getAccount(r.accountId);
    expect(after).toEqual(before[i] as Account);
    // and a fold of the events is the projection
    let folded: Account | null = null;
    for (const e of await reopened.events(r.accountId)) folded = applyAccountEvent(folded, e);
    expect(folded).toEqual(after as Account);
  }
  expect(before[0]).toMatchObject({ tier: "pro", emailVerified: true, deletedAt: null });
  expect(before[1]).toMatchObject({ pii: null, deletedAt: expect.any(String) });
  expect(before[1]?.keys.every((k) => k.revokedAt)).toBe(true);
  expect(before[1]?.publishableKeys?.every((k) => k.revokedAt)).toBe(true);
  expect(before[0]?.publishableKeys?.[0]).toMatchObject({
    dailyCap: 10,
    revokedAt: expect.any(String),
  });
  db.close();
});

test("an account log written by an earlier version (plaintext e-mail, no sealed data) is imported", async () => {
  const dataDir = tempDir();
  const accountId = "0190a0b0-0000-7000-8000-000000000001";
  const lines = [
    {
      id: "0190a0b0-0000-7000-8000-0000000000a1",
      accountId,
      ts: "2026-01-01T00:00:00.000Z",
      type: "account.registered",
      data: { email: "old@example.com", tier: "pro", limits: null },
    },
    {
      id: "0190a0b0-0000-7000-8000-0000000000a2",
      accountId,
      ts: "2026-01-01T00:00:00.000Z",
      type: "key.issued",
      data: {
        keyId: "00112233445566aa",
        hash: "ab".repeat(32),
        prefix: "bak_00112233445566aa_xyz",
      },
    },
  ];
  writeFileSync(
    join(dataDir, "accounts.jsonl"),
    lines.map((l) => `${JSON.stringify(l)}\n`).join(""),
  );
  const store = openEmbeddedStore({ DATA_DIR: dataDir, CATALOG_FILE });
  const account = await store.accounts.getAccount(accountId);
  expect(account).toMatchObject({
    id: accountId,
    email: "old@example.com",
    tier: "pro",
    pii: null,
    version: 2,
  });
  expect(account?.keys).toHaveLength(1);
  await store.close();
});

test("an operator-created account's e-mail label is sealed, never written in clear", async () => {
  const dataDir = tempDir();
  const t = await makeAuthApp({ DATA_DIR: dataDir });
  const issued = await t.deps.accounts.createAccountWithKey({
    tier: "free",
    email: "label@example.com",
  });
  const onDisk = databaseBytes(dataDir);
  expect(onDisk).toContain(issued.accountId);
  expect(onDisk).not.toContain("label@example.com");
  // it cannot be used to log in or to reset a password (it has no e-mail index)
  await expectError(
    await t.json("/auth/login", { email: "label@example.com", password: "whatever123" }),
    401,
    "invalid_credentials",
  );
  await t.close();
});
