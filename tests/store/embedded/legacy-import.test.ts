/**
 * A DATA_DIR written by the earlier embedded store (JSONL logs, data key and secret files:
 * tests/fixtures/legacy-data-dir) imported into the SQLite database at start, through the real
 * app: every account, key, token, billing link, secret, enrichment record and the visitor count
 * is there; each imported file is renamed `.imported`; a second start imports nothing again, and
 * a re-run after a crash between the commit and the renames gives the same database.
 */
import { afterEach, expect, test } from "bun:test";
import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { jwtVerify } from "jose";
import { hashKey } from "../../../src/accounts/keys";
import { openEmbeddedStore, type Store } from "../../../src/deps";
import { addDays, utcDay } from "../../../src/platform/day";
import { captureLogs } from "../../../src/platform/log";
import { LEGACY_FILES } from "../../../src/store/embedded/legacy-import";
import { makeAuthApp } from "../../accounts/helpers";
import { CATALOG_FILE, tempDir } from "../../support/app";
import { copyDatedFixture, datedFixture, shiftDates } from "../../support/dated-fixture";

const FIXTURE = join(import.meta.dir, "../../fixtures/legacy-data-dir");
const recorded = JSON.parse(readFileSync(join(FIXTURE, "expected.json"), "utf8"));
/** the fixture replayed as if recorded today: its tokens as fresh as when it was made */
const dated = datedFixture(join(FIXTURE, "data"), recorded.day);
const expected = shiftDates(recorded, dated) as {
  keys: Record<"free" | "pro" | "user", string>;
  accounts: Record<"free" | "pro", string>;
  user: {
    email: string;
    password: string;
    accessToken: string;
    refreshToken: string;
    publishableKey: { keyId: string; origins: string[] };
  };
  visitors: number;
};
const legacy = (dir: string, f: string) => readFileSync(join(dir, f), "utf8");

/** a copy of the fixture DATA_DIR, its dates moved to today */
function legacyDataDir(): string {
  const dir = tempDir("legacy-");
  copyDatedFixture(join(FIXTURE, "data"), dir, dated);
  return dir;
}

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
const open = (dir: string) => {
  const s = openEmbeddedStore({ DATA_DIR: dir, CATALOG_FILE });
  stores.push(s);
  return s;
};

/** every row of every table the import writes, for comparing two databases */
function dump(s: Store): Record<string, unknown[]> {
  const tables = [
    "account_events",
    "accounts",
    "account_key_ids",
    "account_data_keys",
    "server_secrets",
    "auth_tokens",
    "billing_links",
    "billing_events",
    "billing_subscriptions",
    "enrichment",
    "visitor_counter",
  ];
  return Object.fromEntries(
    tables.map((t) => [
      t,
      (s.db?.all(`SELECT * FROM ${t}`) ?? []).map((r) => JSON.stringify(r)).sort(),
    ]),
  );
}

test("an earlier DATA_DIR is imported at start: keys authenticate, the user logs in, old tokens and secrets work, files are renamed", async () => {
  const dir = legacyDataDir();
  const jwtSecret = legacy(dir, "jwt-secret").trim();
  const indexSecret = legacy(dir, "secrets/email-index").trim();
  const enrichment = JSON.parse(legacy(dir, "enrichment.jsonl").split("\n")[0] as string);
  const logs = captureLogs();
  let t: Awaited<ReturnType<typeof makeAuthApp>>;
  try {
    t = await makeAuthApp({ DATA_DIR: dir });
  } finally {
    logs.restore();
  }
  const imported = logs.lines.filter((l) => String(l.msg).startsWith("imported the files"));
  expect(imported).toHaveLength(1);
  expect(imported[0]).toMatchObject({
    accountEvents: 7,
    dataKeys: 1,
    secrets: 2,
    tokens: 2,
    billingLinks: 1,
    enrichment: 1,
    visitors: expected.visitors,
  });
  try {
    // the old API keys authenticate through the real app, with their tiers
    for (const [who, tier] of [
      ["free", "free"],
      ["pro", "pro"],
      ["user", "free"],
    ] as const) {
      const r = await t.get("/v1/catalog/github", expected.keys[who]);
      expect({ who, status: r.status }).toEqual({ who, status: 200 });
      expect((await t.deps.accounts.verifyKey(expected.keys[who]))?.tier).toBe(tier);
    }
    for (const who of ["free", "pro"] as const)
      expect((await t.deps.store.accounts.getAccount(expected.accounts[who]))?.id).toBe(
        expected.accounts[who],
      );
    const user = await t.deps.accounts.verifyKey(expected.keys.user);
    // the publishable key
    const pk = await t.deps.store.accounts.findByPublishableKeyId(
      expected.user.publishableKey.keyId,
    );
    expect(pk?.id).toBe(user?.accountId);
    expect(pk?.publishableKeys?.[0]?.origins).toEqual(expected.user.publishableKey.origins);
    // secrets: the same values, so e-mail lookups and JWTs signed before still work
    expect(await t.deps.store.accounts.serverSecret("email-index")).toBe(indexSecret);
    expect(await t.deps.store.accounts.serverSecret("jwt")).toBe(jwtSecret);
    const { payload } = await jwtVerify(
      expected.user.accessToken,
      new TextEncoder().encode(jwtSecret),
      {
        currentDate: new Date(
          1000 *
            (JSON.parse(atob(expected.user.accessToken.split(".")[1] as string)) as { iat: number })
              .iat,
        ),
      },
    );
    expect(payload.sub).toBe(user?.accountId);
    const fresh = await t.deps.access.sign(user?.accountId as string, "free");
    expect(await jwtVerify(fresh, new TextEncoder().encode(jwtSecret))).toBeTruthy();
    // the user's data key and e-mail index: the e-mail is read, the password checked
    expect(
      (
        await t.json("/auth/login", {
          email: expected.user.email,
          password: expected.user.password,
        })
      ).status,
    ).toBe(200);
    const me = await t.bearer("/auth/me", fresh);
    expect(((await me.json()) as { email: string }).email).toBe(expected.user.email);
    // the refresh token issued before
    const refreshed = await t.json("/auth/refresh", { refreshToken: expected.user.refreshToken });
    expect(refreshed.status).toBe(200);
    // billing, enrichment, visitors
    expect(await t.deps.store.billing.byCustomer("cus_legacy1")).toMatchObject({
      accountId: expected.accounts.pro,
      subscriptionId: "sub_legacy1",
    });
    expect(await t.deps.store.enrichment.all()).toEqual([enrichment]);
    expect(await t.deps.store.visitors.total()).toBe(expected.visitors);
    // each imported file kept under a new name
    const names = readdirSync(dir);
    for (const f of LEGACY_FILES.filter((f) => f !== "discoveries.jsonl")) {
      expect(names).toContain(`${f}.imported`);
      expect(names).not.toContain(f);
    }
  } finally {
    await t.deps.close();
  }

  // a second start: nothing imported again, everything still there
  const again = captureLogs();
  try {
    const s = open(dir);
    expect(await s.visitors.total()).toBe(expected.visitors);
    expect((await s.accounts.findByKeyId(expected.keys.pro.slice(4, 20)))?.keys[0]?.hash).toBe(
      hashKey(expected.keys.pro),
    );
  } finally {
    again.restore();
  }
  expect(again.lines.filter((l) => String(l.msg).startsWith("imported the files"))).toEqual([]);
}, 60_000);

test("a re-run after a crash between the commit and the renames changes nothing", async () => {
  const dir = legacyDataDir();
  const logs = captureLogs();
  try {
    const first = open(dir);
    const before = dump(first);
    await first.close();
    stores.length = 0;
    // as if the process died before renaming: the files are back under their old names
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".imported")))
      renameSync(join(dir, f), join(dir, f.slice(0, -".imported".length)));
    const second = open(dir);
    expect(dump(second)).toEqual(before);
    expect(before.account_events).toHaveLength(7);
    expect(before.auth_tokens).toHaveLength(2);
  } finally {
    logs.restore();
  }
  expect(logs.lines.filter((l) => String(l.msg).startsWith("imported the files"))).toHaveLength(2);
});

test("a token that had expired when the store was imported is left out", async () => {
  // the same files, as if written two days before today: the one-day verify token has expired,
  // the thirty-day refresh token has not
  const dir = tempDir("legacy-");
  copyDatedFixture(
    join(FIXTURE, "data"),
    dir,
    datedFixture(join(FIXTURE, "data"), recorded.day, addDays(utcDay(Date.now()), -2)),
  );
  const logs = captureLogs();
  try {
    const s = open(dir);
    expect(s.db?.all<{ kind: string }>("SELECT kind FROM auth_tokens").map((r) => r.kind)).toEqual([
      "refresh",
    ]);
  } finally {
    logs.restore();
  }
  expect(logs.lines.find((l) => String(l.msg).startsWith("imported the files"))).toMatchObject({
    tokens: 1,
  });
});

test("a torn last line and an unreadable data key file are skipped with a warning; the rest is imported", async () => {
  const dir = legacyDataDir();
  appendFileSync(join(dir, "accounts.jsonl"), '{"id":"torn","accountId":"x","ts":"2026');
  writeFileSync(join(dir, "account-keys", "cut-short.json"), '{"accountId":"');
  const logs = captureLogs();
  try {
    const s = open(dir);
    expect(s.db?.get<{ n: number }>("SELECT count(*) AS n FROM account_events")?.n).toBe(7);
    expect(s.db?.get<{ n: number }>("SELECT count(*) AS n FROM account_data_keys")?.n).toBe(1);
  } finally {
    logs.restore();
  }
  expect(logs.lines).toContainEqual(
    expect.objectContaining({
      level: "warn",
      msg: "skipping unreadable line in event log",
      torn: true,
    }),
  );
  expect(logs.lines).toContainEqual(
    expect.objectContaining({
      level: "warn",
      msg: "skipping unreadable account data key file",
      file: "cut-short.json",
    }),
  );
  expect(existsSync(join(dir, "accounts.jsonl.imported"))).toBe(true);
});
