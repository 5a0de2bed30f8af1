/**
 * The HTTP routes that touch storage, through the real app on the MongoDB store (MONGODB_URL or
 * the run's FerretDB, tests/support/mongo.ts): accounts and keys, metered usage events,
 * analytics, catalog reload from MongoDB, background enrichment, and a restart on the same
 * database. The catalog seeded into MongoDB is the small real subset (tests/support/catalog.ts):
 * seeding the whole catalog is the store contract's job.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Db, MongoClient } from "mongodb";
import type { BuiltCatalog } from "../../src/catalog/built-catalog";
import { FileCatalogSource } from "../../src/catalog/store/embedded";
import { MongoCatalogSource } from "../../src/catalog/store/mongo";
import { openMongoStore } from "../../src/deps";
import { setLogLevel } from "../../src/platform/log";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../support/app";
import { smallCatalogFile } from "../support/catalog";
import { expectError } from "../support/errors";
import { mongoUrl, skipNote, testDbName } from "../support/mongo";
import { describeUnless } from "../support/skip";
import { settle } from "../usage/util";

const mongo = await mongoUrl();
const dbName = testDbName("bapi_http");
const today = () => new Date().toISOString().slice(0, 10);

/** The real app over a MongoDB store on the test database (memory counters). */
async function mongoApp(): Promise<TestApp> {
  const store = await openMongoStore(
    { CATALOG_FILE: smallCatalogFile(), MONGODB_DB: dbName },
    mongo.url as string,
  );
  return makeApp({}, { store });
}

const admin = (t: TestApp, path: string, method: string, body?: unknown) =>
  t.req(path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describeUnless(mongo.reason)(`HTTP on the MongoDB store ${skipNote(mongo)}`.trim(), () => {
  let t: TestApp;
  let client: MongoClient;
  let db: Db;
  let metered = 0;
  let account: { accountId: string; keyId: string; apiKey: string };

  beforeAll(async () => {
    setLogLevel("error");
    t = await mongoApp();
    const { MongoClient } = await import("mongodb");
    client = await MongoClient.connect(mongo.url as string);
    db = client.db(dbName);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await db?.dropDatabase();
    await client?.close();
    setLogLevel("info");
  }, 60_000);

  test("the store creates its indexes", async () => {
    const names = async (c: string) => (await db.collection(c).indexes()).map((i) => i.name);
    expect(await names("accounts")).toEqual(expect.arrayContaining(["id_unique", "key_id"]));
    expect(await names("account_events")).toEqual(expect.arrayContaining(["id_unique"]));
    expect(await names("brands")).toEqual(expect.arrayContaining(["slug_unique", "domains"]));
    expect(await names("assets")).toEqual(expect.arrayContaining(["brand_variant"]));
    expect(await names("usage_log")).toEqual(expect.arrayContaining(["t"]));
    expect(await names("usage_pending")).toEqual(expect.arrayContaining(["t"]));
    expect(await names("usage_counted")).toEqual(expect.arrayContaining(["t"]));
    expect(await names("usage_periods")).toEqual(expect.arrayContaining(["a_g_p", "g_p"]));
    expect(await names("usage_misses")).toEqual(expect.arrayContaining(["a_day", "day"]));
  }, 60_000);

  test("POST /admin/keys stores the account and its key; the key authenticates", async () => {
    const r = await admin(t, "/admin/keys", "POST", { tier: "free", email: "m@x.test" });
    expect(r.status).toBe(201);
    account = (await r.json()) as typeof account;
    const doc = await db.collection("accounts").findOne({ id: account.accountId });
    expect(doc?.keys?.[0]?.id).toBe(account.keyId);
    // only the hash is stored
    expect(JSON.stringify(doc)).not.toContain(account.apiKey);
    expect(
      await db.collection("account_events").countDocuments({ accountId: account.accountId }),
    ).toBe(2);
    metered++;
    const svg = await t.get("/v1/svg/github", account.apiKey);
    expect(svg.status).toBe(200);
    expect(await svg.text()).toContain("<svg");
    await expectError(await t.get("/v1/svg/github", "bak_nope"), 401, "invalid_api_key");
  }, 60_000);

  test("metered requests become usage events and analytics read them back", async () => {
    const statuses: number[] = [];
    for (const slug of ["github", "gitlab", "no-such-brand-xyz"]) {
      metered++;
      statuses.push((await t.get(`/v1/catalog/${slug}`, account.apiKey)).status);
    }
    expect(statuses).toEqual([200, 200, 404]);
    await settle(t.deps.usage, metered, t.deps.store.usage);
    // the account's batches: their events' statuses as int columns
    const batches = await db.collection("usage_log").find({ a: account.accountId }).toArray();
    expect(batches.reduce((n, b) => n + (b.n as number), 0)).toBe(metered);
    expect(batches.flatMap((b) => b.st as number[]).sort()).toEqual([200, 200, 200, 404]);
    const r = await t.get(`/v1/analytics/usage?from=${today()}&to=${today()}`, account.apiKey);
    expect(r.status).toBe(200);
    const body = (await r.json()) as {
      totals: Record<string, { requests: number; errors: number; rateLimited: number }>;
    };
    expect(body.totals.svg).toEqual({ requests: 1, errors: 0, rateLimited: 0 });
    expect(body.totals.catalog).toEqual({ requests: 3, errors: 1, rateLimited: 0 });
  }, 60_000);

  test("tier change and key regeneration are stored: the old key is refused, the new works", async () => {
    const tier = await admin(t, `/admin/accounts/${account.accountId}`, "PATCH", {
      tier: "pro",
    });
    expect(tier.status).toBe(200);
    const r = await admin(t, `/admin/accounts/${account.accountId}/keys`, "POST");
    expect(r.status).toBe(201);
    const regen = (await r.json()) as { apiKey: string; revokedKeyIds: string[] };
    expect(regen.revokedKeyIds).toEqual([account.keyId]);
    await expectError(await t.get("/v1/svg/github", account.apiKey), 401, "invalid_api_key");
    metered++;
    expect((await t.get("/v1/svg/github", regen.apiKey)).status).toBe(200);
    const doc = await db.collection("accounts").findOne({ id: account.accountId });
    expect(doc?.tier).toBe("pro");
    expect(doc?.keys.map((k: { revokedAt: string | null }) => k.revokedAt !== null)).toEqual([
      true,
      false,
    ]);
    account.apiKey = regen.apiKey;
    await settle(t.deps.usage, metered, t.deps.store.usage);
  }, 60_000);

  test("enrichment results are written to MongoDB and served", async () => {
    metered++;
    const first = await t.get("/v1/brand?domain=github.com", account.apiKey);
    expect(first.status).toBe(200);
    await t.deps.enrichment.idle();
    const record = await db.collection("enrichments").findOne({ slug: "github" });
    expect(record?.verifiedAt).toBeString();
    const brandId = t.deps.catalog.brand("github")?.id as number;
    const dark = await db
      .collection<{ _id: string; source: string }>("assets")
      .findOne({ _id: `${brandId}:dark` });
    // every brand's dark variant comes from the catalog build, seeded into MongoDB as built
    const seeded = (await new FileCatalogSource(smallCatalogFile()).load()).brands.find(
      (b) => b.slug === "github",
    );
    expect(seeded?.variants.dark?.source).toBeDefined();
    expect(dark?.source).toBe(seeded?.variants.dark?.source as string);
    metered++;
    const served = await t.get("/v1/svg/github?variant=dark", account.apiKey);
    expect(served.headers.get("x-svg-variant")).toBe("dark");
    await settle(t.deps.usage, metered, t.deps.store.usage);
  }, 60_000);

  test("a new catalog version written to MongoDB is picked up by a running instance", async () => {
    const built = await new FileCatalogSource(smallCatalogFile()).load();
    const gone = built.brands.find((b) => b.slug === "gitlab");
    const changed: BuiltCatalog = {
      ...built,
      version: `${built.version}-next`,
      brands: built.brands
        .filter((b) => b !== gone)
        .map((b) => (b.slug === "github" ? { ...b, name: "GitHub (renamed)" } : b)),
    };
    expect(await new MongoCatalogSource(db, tempDir()).seed(changed)).toBe(true);
    expect(await db.collection("brands").countDocuments({ slug: "gitlab" })).toBe(0);
    expect(await db.collection("assets").countDocuments({ brandId: gone?.id })).toBe(0);
    t.deps.catalog.watch(100);
    const until = Date.now() + 50_000;
    while (t.deps.catalog.version !== changed.version && Date.now() < until) await Bun.sleep(50);
    metered += 2;
    const gh = await t.get("/v1/catalog/github", account.apiKey);
    expect(await gh.json()).toMatchObject({ slug: "github", name: "GitHub (renamed)" });
    await expectError(await t.get("/v1/catalog/gitlab", account.apiKey), 404, "service_not_found");
    await settle(t.deps.usage, metered, t.deps.store.usage);
  }, 90_000);

  test("signed image URLs and publishable keys on MongoDB: stored hashed, stopped by regeneration and revocation", async () => {
    const made = await admin(t, "/admin/keys", "POST", { tier: "pro" });
    const other = (await made.json()) as { accountId: string; apiKey: string };
    const signed = await t.post("/v1/image-urls", other.apiKey, {
      images: [{ slug: "github", format: "png", size: 32 }],
    });
    const { path } = ((await signed.json()) as { urls: { path: string }[] }).urls[0]!;
    expect((await t.req(path)).status).toBe(200);
    const pk = await admin(t, `/admin/accounts/${other.accountId}/publishable-keys`, "POST", {
      origins: ["app.example.com"],
    });
    const { keyId, publishableKey } = (await pk.json()) as {
      keyId: string;
      publishableKey: string;
    };
    const viaPk = `/i/github.svg?key=${publishableKey}`;
    const origin = { headers: { origin: "https://app.example.com" } };
    expect((await t.req(viaPk, origin)).status).toBe(200);
    const doc = await db.collection("accounts").findOne({ "publishableKeys.id": keyId });
    expect(doc?.id).toBe(other.accountId);
    expect(JSON.stringify(doc)).not.toContain(publishableKey);
    expect((await admin(t, `/admin/accounts/${other.accountId}/keys`, "POST")).status).toBe(201);
    const revoked = await t.req(path);
    expect(revoked.status).toBe(403);
    expect(((await revoked.json()) as { error: string }).error).toBe("url_revoked");
    // regenerating the API key keeps publishable keys; revoking one stops it
    expect((await t.req(viaPk, origin)).status).toBe(200);
    expect((await admin(t, `/admin/publishable-keys/${keyId}`, "DELETE")).status).toBe(200);
    await expectError(await t.req(viaPk, origin), 401, "invalid_api_key");
    metered += 3;
    await settle(t.deps.usage, metered, t.deps.store.usage);
  }, 60_000);

  test("a restarted instance on the same database keeps accounts, keys and usage", async () => {
    await t.close();
    t = await mongoApp();
    metered = 1;
    expect((await t.get("/v1/svg/github", account.apiKey)).status).toBe(200);
    await settle(t.deps.usage, metered, t.deps.store.usage);
    const r = await t.get(`/v1/analytics/usage?from=${today()}&to=${today()}`, account.apiKey);
    const body = (await r.json()) as { totals: Record<string, { requests: number }> };
    // 1 + 1 + 1 svg before the restart (one of them the dark variant) and 1 after
    expect(body.totals.svg?.requests).toBe(4);
    expect(body.totals.catalog?.requests).toBe(5);
  }, 120_000);
});
