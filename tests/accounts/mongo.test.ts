import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Db, MongoClient } from "mongodb";
import { AuthService } from "../../src/accounts/auth";
import { AccessTokens } from "../../src/accounts/jwt";
import { OutboxMailer } from "../../src/accounts/mail";
import { AccountService } from "../../src/accounts/service";
import { MongoAccountStore, MongoTokenStore } from "../../src/accounts/store/mongo";
import { passwords } from "../../src/platform/password";
import { RateLimiter } from "../../src/quota/rate-limit";
import { MemoryCounterStore } from "../../src/quota/store/memory";
import { tempDir } from "../support/app";
import { mongoUrl, skipNote, testDbName } from "../support/mongo";
import { describeUnless } from "../support/skip";
import { decodeQuotedPrintable } from "./helpers";

setDefaultTimeout(60_000);

/**
 * The account service on the MongoDB adapters (a MongoDB-wire server such as FerretDB), when
 * one is available (tests/support/mongo.ts: MONGODB_URL or FerretDB): the same flows as over HTTP, then no collection holds the address or a hash.
 */
const mongo = await mongoUrl();
const url = mongo.url;
describeUnless(mongo.reason)(`accounts on MongoDB ${skipNote(mongo)}`.trim(), () => {
  let client: MongoClient;
  let db: Db;
  let auth: AuthService;
  let accounts: AccountService;
  let outbox: OutboxMailer;
  beforeAll(async () => {
    client = new MongoClient(url as string, { serverSelectionTimeoutMS: 5000 });
    await client.connect();
    db = client.db(testDbName("bapi_auth"));
    await MongoAccountStore.ensureIndexes(db);
    const store = new MongoAccountStore(db);
    accounts = new AccountService(store, 0);
    outbox = new OutboxMailer(join(tempDir(), "outbox"), "no-reply@brand.test");
    auth = new AuthService({
      accounts,
      store,
      tokens: new MongoTokenStore(db),
      access: await AccessTokens.create({
        secret: "a-secret-that-is-at-least-32-chars-long",
        issuer: "i",
        audience: "a",
        ttlSeconds: 900,
      }),
      passwords,
      mail: outbox,
      limiter: new RateLimiter(new MemoryCounterStore()),
      publicUrl: "http://localhost:3000",
      upgradeUrl: "https://example.test/upgrade",
    });
  });
  afterAll(async () => {
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  const lastToken = (path: string) => {
    const files = readdirSync(outbox.dir);
    const texts = files.map((f) =>
      decodeQuotedPrintable(readFileSync(join(outbox.dir, f), "utf8")),
    );
    const hits = texts.flatMap((t) => [
      ...t.matchAll(new RegExp(`/${path}\\?token=([\\w-]+)`, "g")),
    ]);
    return hits.at(-1)?.[1] as string;
  };

  test("register, verify, login, refresh reuse, reset, delete; nothing personal left", async () => {
    const email = "Mongo.User@Example.com";
    const reg = await auth.register(email, "first password!");
    await expect(auth.register("mongo.user@example.com", "x".repeat(12))).rejects.toMatchObject({
      code: "email_taken",
    });
    expect(await accounts.verifyKey(reg.apiKey)).toMatchObject({ accountId: reg.accountId });
    await auth.verifyEmail(lastToken("verify-email"));
    const pair = await auth.login(email, "first password!", "1.2.3.4");
    expect(await auth.verifyBearer(pair.accessToken)).toMatchObject({ accountId: reg.accountId });
    const pair2 = await auth.refresh(pair.refreshToken);
    await expect(auth.refresh(pair.refreshToken)).rejects.toMatchObject({
      kind: "unauthenticated",
      code: "invalid_token",
    });
    await expect(auth.refresh(pair2.refreshToken)).rejects.toMatchObject({
      kind: "unauthenticated",
      code: "invalid_token",
    });
    await auth.forgotPassword(email);
    const session = await auth.login(email, "first password!", "1.2.3.4");
    await auth.resetPassword(lastToken("reset-password"), "second password");
    await expect(auth.refresh(session.refreshToken)).rejects.toMatchObject({
      kind: "unauthenticated",
      code: "invalid_token",
    });
    const after = await auth.login(email, "second password", "1.2.3.4");
    expect((await auth.me(reg.accountId))?.emailVerified).toBe(true);
    await auth.deleteAccount(reg.accountId, "second password");
    expect(await auth.verifyBearer(after.accessToken)).toBeNull();
    expect(await accounts.verifyKey(reg.apiKey)).toBeNull();
    await expect(auth.login(email, "second password", "1.2.3.4")).rejects.toMatchObject({
      code: "invalid_credentials",
    });
    const collections = await db.listCollections().toArray();
    expect(collections.map((c) => c.name)).toContain("account_events");
    for (const c of collections) {
      const text = JSON.stringify(await db.collection(c.name).find({}).toArray()).toLowerCase();
      expect(text.includes("mongo.user@example.com") ? c.name : "").toBe("");
      expect(text.includes("$argon2id$") ? c.name : "").toBe("");
    }
    expect(
      await db.collection("account_events").countDocuments({ accountId: reg.accountId }),
    ).toBeGreaterThan(4);
  });
});
