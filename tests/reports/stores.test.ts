/**
 * Reports and pins on both stores: the admin CLI's `reports list|accept|reject` on the
 * embedded store (in process, the same code as `npm run admin -- reports ...`), and on MongoDB
 * (FerretDB) report -> accept with a pin fetched from the loopback https fixture -> served by
 * the brand, SVG and PNG routes, by a second instance, after a catalog reload and a restart;
 * removing the pin restores the catalog's artwork.
 */

import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type { MongoClient } from "mongodb";
import { openMongoStore } from "../../src/deps";
import { setLogLevel } from "../../src/platform/log";
import { reportHooks } from "../../src/reports/cli";
import type { CorrectionsStore } from "../../src/reports/store/port";
import { cliInProcess } from "../support/admin-cli";
import { ADMIN_TOKEN, CATALOG_FILE, makeApp, type TestApp, tempDir } from "../support/app";
import { smallCatalogFile } from "../support/catalog";
import { mongoUrl, skipNote, testDbName } from "../support/mongo";
import { describeUnless, testIf } from "../support/skip";
import type { FixtureWeb } from "../support/web-fixtures";
import { fixtureFetcher, startArtworkSite } from "./fixtures";

setDefaultTimeout(120_000);
let web: FixtureWeb;
const SLUG = "github";

beforeAll(async () => {
  setLogLevel("error");
  web = await startArtworkSite();
});
afterAll(async () => {
  await web?.stop();
  setLogLevel("info");
});

const admin = (t: TestApp, path: string, method = "GET", body?: unknown) =>
  t.req(path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** The CLI in this process, its fetcher pointed at the fixture site. */
async function cli(args: string[], env: Record<string, string>) {
  reportHooks.configure = (c) => {
    c.fetcher = fixtureFetcher(web);
  };
  try {
    return await cliInProcess(args, env);
  } finally {
    reportHooks.configure = undefined;
  }
}

describe("admin CLI reports (embedded store)", () => {
  test("list as a table, accept with a pin (seen by the running service), reject", async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, CATALOG_FILE, LOG_LEVEL: "error" };
    const t = await makeApp({ DATA_DIR: dataDir });
    try {
      const key = await t.key("internal");
      const before = await (await t.get(`/v1/svg/${SLUG}?variant=color`, key)).text();
      const file = async (kind: string) =>
        (
          (await (
            await t.post("/v1/reports", key, {
              slug: SLUG,
              kind,
              url: "https://secure.test/logo.svg",
            })
          ).json()) as { id: string }
        ).id;
      const good = await file("wrong_logo");
      const bad = await file("outdated");

      const list = await cli(["reports", "list"], env);
      expect(list.code).toBe(0);
      const lines = list.out.split("\n");
      expect(lines[0]).toMatch(/^id\s+status\s+votes\s+brand\s+kind\s+created\s+urls$/);
      expect(lines[1]).toContain(bad); // newest first
      expect(lines[2]).toMatch(new RegExp(`^${good}\\s+open\\s+1\\s+github\\s+wrong_logo`));

      const accepted = await cli(["reports", "accept", good, "--pin"], env);
      expect(accepted.code).toBe(0);
      expect(accepted.out).toContain("pinned artwork:color of github");
      const rejected = await cli(["reports", "reject", bad], env);
      expect(rejected.out).toContain("rejected");
      const twice = await cli(["reports", "reject", bad], env);
      expect(twice.code).toBe(1);
      expect(twice.err).toContain("already rejected");
      expect(
        (await cli(["reports", "list", "--status", "open"], env)).out.split("\n"),
      ).toHaveLength(1);

      // the running service reads the pin on its next poll
      await t.deps.corrections.refreshPins();
      const pinned = await (await t.get(`/v1/svg/${SLUG}?variant=color`, key)).text();
      expect(pinned).not.toBe(before);
      expect(pinned).toContain("e4002b");
      const audit = (await (await admin(t, `/admin/brands/${SLUG}/audit`)).json()) as {
        items: { type: string; by: string }[];
      };
      expect(audit.items.slice(0, 3).map((e) => e.type)).toEqual([
        "report_rejected",
        "report_accepted",
        "pin_set",
      ]);
      expect(audit.items[0]?.by).toMatch(/^cli:[^@]+@.+$/);
    } finally {
      await t.close();
    }
  });
});

const mongo = await mongoUrl();
const onMongo = testIf(!!mongo.url, mongo.reason ?? "");

describeUnless(mongo.reason)(`reports and pins on MongoDB ${skipNote(mongo)}`.trim(), () => {
  const dbName = testDbName("bapi_reports");
  let client: MongoClient;
  const mongoApp = async () => {
    const store = await openMongoStore(
      { CATALOG_FILE: smallCatalogFile(), MONGODB_DB: dbName },
      mongo.url as string,
    );
    return makeApp(
      {},
      {
        store,
        customize: (deps) => {
          deps.corrections.fetcher = fixtureFetcher(web);
        },
      },
    );
  };
  afterAll(async () => {
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  test("report -> accept with pin -> served by two instances, after reload and restart; unpin restores", async () => {
    const { MongoClient } = await import("mongodb");
    client = await MongoClient.connect(mongo.url as string);
    const a = await mongoApp();
    const b = await mongoApp();
    let before = "";
    let pinned = "";
    try {
      const key = await a.key("internal");
      before = await (await a.get(`/v1/svg/${SLUG}?variant=color`, key)).text();
      const body = { slug: SLUG, kind: "wrong_logo", url: "https://secure.test/logo.svg" };
      const first = (await (await a.post("/v1/reports", key, body)).json()) as { id: string };
      // another account's filing on the second instance: one more vote
      const vote = (await (await b.post("/v1/reports", await b.key("free"), body)).json()) as {
        id: string;
        votes: number;
      };
      expect(vote).toMatchObject({ id: first.id, votes: 2 });
      const queue = (await (await admin(b, "/admin/reports?status=open")).json()) as {
        items: { id: string; votes: number }[];
      };
      expect(queue.items).toEqual([expect.objectContaining({ id: first.id, votes: 2 })]);

      const accepted = await admin(a, `/admin/reports/${first.id}/accept`, "POST", { pin: true });
      expect(accepted.status).toBe(200);
      pinned = await (await a.get(`/v1/svg/${SLUG}?variant=color`, key)).text();
      expect(pinned).toContain("e4002b");
      expect((await a.get(`/v1/png/${SLUG}?variant=color&size=64`, key)).status).toBe(200);
      // the second instance reads the pin on its poll
      await b.deps.corrections.refreshPins();
      expect(await (await b.get(`/v1/svg/${SLUG}?variant=color`, key)).text()).toBe(pinned);
      await a.deps.catalog.load();
      expect(await (await a.get(`/v1/svg/${SLUG}?variant=color`, key)).text()).toBe(pinned);
      const doc = await client.db(dbName).collection("pins").findOne({});
      expect(doc?.field).toBe("artwork:color");
    } finally {
      await a.deps.close();
      await b.deps.close();
    }
    const c = await mongoApp();
    try {
      const key = await c.key("internal");
      expect(await (await c.get(`/v1/svg/${SLUG}?variant=color`, key)).text()).toBe(pinned);
      const brand = (await (await c.get(`/v1/brand?domain=github.com`, key)).json()) as {
        artwork: { source: string }[];
      };
      expect(brand.artwork.map((s) => s.source)).toContain("pin");
      expect((await admin(c, `/admin/brands/${SLUG}/artwork/color`, "DELETE")).status).toBe(200);
      expect(await (await c.get(`/v1/svg/${SLUG}?variant=color`, key)).text()).toBe(before);
      const audit = (await (await admin(c, `/admin/brands/${SLUG}/audit`)).json()) as {
        items: { type: string }[];
      };
      expect(audit.items.map((e) => e.type).slice(0, 3)).toEqual([
        "pin_removed",
        "report_accepted",
        "pin_set",
      ]);
    } finally {
      await c.deps.close();
    }
  });
});

/** Reports as stored before filings were joined by brand and kind: one url and note each. */
const legacyReports = (brandId: number) =>
  ["a", "b", "c"].map((n, i) => ({
    id: `0190000${i}-0000-7000-8000-00000000000${i}`,
    brandId,
    slug: "github",
    kind: "wrong_logo",
    url: `https://brand.example/${n}.svg`,
    note: `note ${n}`,
    status: i === 2 ? "rejected" : "open",
    votes: i + 1,
    accountId: `acct-${n}`,
    createdAt: `2026-01-0${i + 1}T00:00:00.000Z`,
    decidedAt: i === 2 ? "2026-01-04T00:00:00.000Z" : null,
    decidedBy: i === 2 ? "admin" : null,
  }));

/** The legacy reports as either store reads them after its migration: open duplicates folded. */
async function expectFolded(store: CorrectionsStore) {
  const reports = await store.reports(undefined, 10);
  expect(reports.map((r) => [r.status, r.votes, r.urls.length, r.notes.length])).toEqual([
    ["rejected", 3, 1, 1],
    ["open", 3, 2, 2],
  ]);
  // the folded report's accounts voted on the one kept
  expect((await store.reportsOf("acct-b", 10)).map((r) => r.id)).toEqual([
    reports[1]?.id as string,
  ]);
  return reports;
}

describe("reports kept by an earlier version", () => {
  test("embedded: open duplicates folded, urls and notes kept, a vote row per first reporter", async () => {
    const { Database } = await import("../../src/store/embedded/db");
    const { EmbeddedCorrectionsStore } = await import("../../src/reports/store/embedded");
    const db = new Database(join(tempDir(), "old.sqlite"));
    db.exec(`CREATE TABLE reports (id TEXT PRIMARY KEY, brand_id INTEGER NOT NULL, kind TEXT NOT NULL,
      url TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL);
      CREATE UNIQUE INDEX reports_open_once ON reports (brand_id, kind, url) WHERE status = 'open';`);
    for (const r of legacyReports(7))
      db.run(
        "INSERT INTO reports VALUES (?, ?, ?, ?, ?, ?)",
        r.id,
        7,
        r.kind,
        r.url,
        r.status,
        JSON.stringify(r),
      );
    const store = new EmbeddedCorrectionsStore(db);
    const reports = await expectFolded(store);
    // a new filing joins the folded report
    const joined = await store.fileReport({ ...reports[1], id: "x" } as never, {
      accountId: "acct-d",
      url: null,
      note: null,
      at: new Date().toISOString(),
    });
    expect(joined).toMatchObject({ voted: true, report: { id: reports[1]?.id, votes: 4 } });
    db.close();
  });

  onMongo("MongoDB: the same, on the stored documents", async () => {
    const { MongoClient } = await import("mongodb");
    const { MongoCorrectionsStore } = await import("../../src/reports/store/mongo");
    const c = await MongoClient.connect(mongo.url as string);
    const db = c.db(testDbName("bapi_reports_old"));
    try {
      await db.collection("reports").insertMany(
        legacyReports(7).map(({ id, ...r }) => ({
          _id: id as never,
          ...r,
          openKey: r.status === "open" ? `7|wrong_logo|${r.url}` : id,
        })),
      );
      await MongoCorrectionsStore.ensureIndexes(db);
      await expectFolded(new MongoCorrectionsStore(db));
    } finally {
      await db.dropDatabase();
      await c.close();
    }
  });
});
