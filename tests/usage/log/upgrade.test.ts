import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Document } from "mongodb";
import { captureLogs, setLogLevel } from "../../../src/platform/log";
import type { Principal } from "../../../src/quota/principal";
import { Database, DB_FILE } from "../../../src/store/embedded/db";
import { usageSeries } from "../../../src/usage/analytics/series";
import { EmbeddedUsageLog } from "../../../src/usage/log/embedded";
import { mongoUrl, skipNote, testDbName } from "../../support/mongo";
import { describeUnless } from "../../support/skip";
import { tempDir } from "../../support/temp";
import {
  RECORDED_ACCOUNTS,
  RECORDED_NOW,
  RECORDED_QUERIES,
  readAnswers,
  recordedAnswers,
} from "../../support/usage-recorded";

/**
 * Databases of the per-event layout (one JSON row per event, one projection row per analytics
 * cell) are moved into the batch log once, at start, with progress lines, and answer as before:
 * every analytics query, the misses, and the export with the same ids and cursors.
 */

const FIXTURE = join(import.meta.dir, "../../fixtures/usage-recorded");
const now = () => RECORDED_NOW.getTime();

beforeAll(() => setLogLevel("error"));
afterAll(() => setLogLevel("info"));

/**
 * The per-event layout's tables, cells of version 1 (`all` keys bucket|key|brand|..., no brand
 * lists): what a database of the earliest analytics cells holds.
 */
const OLD_SCHEMA = `
  CREATE TABLE usage_events (id TEXT NOT NULL, account TEXT NOT NULL, day INTEGER NOT NULL,
    ts INTEGER NOT NULL, e TEXT NOT NULL, UNIQUE (account, id));
  CREATE TABLE usage_daily (day TEXT NOT NULL, account TEXT NOT NULL, bucket TEXT NOT NULL,
    requests INTEGER NOT NULL, errors INTEGER NOT NULL, rate_limited INTEGER NOT NULL,
    PRIMARY KEY (day, account, bucket)) WITHOUT ROWID;
  CREATE TABLE usage_cells (view INTEGER NOT NULL, period TEXT NOT NULL, account TEXT NOT NULL,
    key TEXT NOT NULL, n INTEGER NOT NULL, e INTEGER NOT NULL, r INTEGER NOT NULL, h BLOB NOT NULL,
    PRIMARY KEY (view, period, account, key)) WITHOUT ROWID;
  CREATE TABLE usage_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
  INSERT INTO usage_meta VALUES ('cells', 1);`;

/** A DATA_DIR holding the embedded fixture's database. */
function fixtureDir(): string {
  const dir = tempDir("usage-upgrade-");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, DB_FILE),
    gunzipSync(readFileSync(join(FIXTURE, "embedded", `${DB_FILE}.gz`))),
  );
  return dir;
}

function compare(
  got: Record<string, Record<string, unknown>>,
  want: Record<string, Record<string, unknown>>,
) {
  for (const acc of RECORDED_ACCOUNTS) {
    for (const q of [...RECORDED_QUERIES, "misses", "export"])
      expect({ acc, q, answer: got[acc]?.[q] }).toEqual({ acc, q, answer: want[acc]?.[q] });
  }
  expect(got.allMisses).toEqual(want.allMisses);
}

describe("the embedded store's per-event layout", () => {
  test("moved once at open, with progress lines; answers, export ids and cursors as before", async () => {
    const dir = fixtureDir();
    const logs = captureLogs();
    let log: EmbeddedUsageLog;
    try {
      log = EmbeddedUsageLog.open(dir, { now });
    } finally {
      logs.restore();
    }
    const msgs = logs.lines.map((l) => l.msg);
    expect(msgs[0]).toBe("usage log: moving the per-event layout (once)");
    expect(msgs).toContain("usage log: events moved");
    expect(msgs.at(-1)).toBe("usage log: per-event layout moved");
    const tables = log.db
      .all<{ name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table'")
      .map((t) => t.name);
    expect(tables).not.toContain("usage_events");
    expect(tables).not.toContain("usage_cells");
    compare(await recordedAnswers(log), readAnswers("embedded/answers.json.gz"));
    await log.close();
    // once: the next open moves nothing and answers the same
    const logs2 = captureLogs();
    try {
      log = EmbeddedUsageLog.open(dir, { now });
    } finally {
      logs2.restore();
    }
    expect(logs2.lines).toEqual([]);
    compare(await recordedAnswers(log), readAnswers("embedded/answers.json.gz"));
    await log.close();
  });

  test("a move killed under way is taken up again by the next start: every event once, counted once", async () => {
    // 160,000 events of the per-event layout: the kill lands among the steps
    const dir = tempDir("usage-upgrade-");
    const db = new Database(join(dir, DB_FILE));
    db.exec(OLD_SCHEMA);
    const t0 = Date.parse("2025-03-10T00:00:00.000Z");
    const accounts = 4;
    const n = 160_000;
    db.tx(() => {
      const put = db.stmt("INSERT INTO usage_events VALUES (?, ?, ?, ?, ?)");
      for (let i = 0; i < n; i++) {
        const ts = new Date(t0 + i * 1000).toISOString();
        const id = `019a${String(i).padStart(4, "0").slice(-4)}-0000-7000-8000-${String(i).padStart(12, "0")}`;
        const accountId = `acc-${i % accounts}`;
        const e = {
          id,
          ts,
          day: ts.slice(0, 10),
          accountId,
          keyId: "k",
          tier: "pro",
          bucket: "svg",
          route: "/v1/svg/:slug",
          slug: `b${i % 60}`,
          variant: null,
          format: "svg",
          status: i % 9 ? 200 : 404,
          latencyMs: 1,
        };
        put.run(id, accountId, 0, t0 + i * 1000, JSON.stringify(e));
      }
    });
    db.close();
    const root = join(import.meta.dir, "../../..");
    const script = join(dir, "open.ts");
    writeFileSync(
      script,
      `import { EmbeddedUsageLog } from ${JSON.stringify(join(root, "src/usage/log/embedded"))};
       EmbeddedUsageLog.open(${JSON.stringify(dir)}, { hourlyDays: 36500 });`,
    );
    const child = Bun.spawn([process.execPath, script], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, LOG_LEVEL: "info" },
    });
    // killed on its first progress line: 100,000 events moved, the rest not
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    let out = "";
    while (!out.includes('"moved":100000')) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    child.kill("SIGKILL");
    await child.exited;
    // it died under way: the old table still there, part of the events in the log
    const raw = new Database(join(dir, DB_FILE));
    const moved = raw.get<{ n: number }>("SELECT coalesce(sum(n), 0) AS n FROM usage_log")?.n ?? 0;
    expect(raw.get("SELECT 1 AS x FROM sqlite_schema WHERE name = 'usage_events'")).toBeDefined();
    expect(moved).toBeGreaterThanOrEqual(100_000);
    expect(moved).toBeLessThan(n);
    raw.close();
    const log = EmbeddedUsageLog.open(dir, { hourlyDays: 36500 });
    expect(log.size).toBe(n);
    let total = 0;
    for (let a = 0; a < accounts; a++) {
      const daily = await log.daily(`acc-${a}`, "2025-03-01", "2025-03-31");
      const requests = daily.reduce((x, d) => x + d.requests, 0);
      expect(requests).toBe(n / accounts);
      total += requests;
    }
    expect(total).toBe(n);
    expect(log.db.integrityCheck()).toEqual(["ok"]);
    await log.close();
  }, 60_000);

  test("cells from before the brand bound: the days in the log are counted again with it, older days keep theirs", async () => {
    const dir = tempDir("usage-upgrade-");
    const db = new Database(join(dir, DB_FILE));
    db.exec(OLD_SCHEMA);
    const ev = (id: string, ts: string, slug: string, keyId: string) => {
      const e = {
        id,
        ts,
        day: ts.slice(0, 10),
        accountId: "acc-m",
        keyId,
        tier: "pro",
        bucket: "svg",
        route: "/v1/svg/:slug",
        slug,
        variant: "mono",
        format: "svg",
        status: 200,
        latencyMs: 2,
      };
      db.run(
        "INSERT INTO usage_events VALUES (?, ?, ?, ?, ?)",
        id,
        "acc-m",
        0,
        Date.parse(ts),
        JSON.stringify(e),
      );
    };
    ev("019a0000-0000-7000-8000-000000000001", "2025-03-20T09:00:00.000Z", "github", "key-a");
    ev("019a0000-0000-7000-8000-000000000002", "2025-03-20T09:10:00.000Z", "github", "key-b");
    ev("019a0000-0000-7000-8000-000000000003", "2025-03-20T10:00:00.000Z", "gitlab", "key-a");
    const cell = "INSERT INTO usage_cells VALUES (?, ?, 'acc-m', ?, ?, 0, 0, X'')";
    // a day no longer in the log (pruned), in the older `all` layout: kept, read with its brand
    db.run(cell, 4, "2025-03-19", "svg|key-a|old-brand|mono|svg|200", 5);
    // a cell the log does not hold on a day in the log: gone with the recount
    db.run(cell, 2, "2025-03-20", "zzz|200", 7);
    db.run("INSERT INTO usage_daily VALUES ('2025-03-19', 'acc-m', 'svg', 5, 0, 0)");
    db.close();

    const log = EmbeddedUsageLog.open(dir, { now: () => Date.parse("2025-03-31T12:00:00Z") });
    const principal = { accountId: "acc-m", tier: "pro", keyId: "key-a" } as Principal;
    const got = await usageSeries(
      log,
      principal,
      { from: "2025-03-19", to: "2025-03-20", group_by: "brand,key" },
      new Date("2025-03-31T12:00:00Z"),
    );
    expect(got.groups.map((g) => [g.brand, g.key, g.requests])).toEqual([
      ["old-brand", "key-a", 5],
      ["github", "key-a", 1],
      ["github", "key-b", 1],
      ["gitlab", "key-a", 1],
    ]);
    expect(
      (await log.daily("acc-m", "2025-03-19", "2025-03-20")).map((d) => [d.day, d.requests]),
    ).toEqual([
      ["2025-03-19", 5],
      ["2025-03-20", 3],
    ]);
    await log.close();
  });
});

const mongo = await mongoUrl();
describeUnless(mongo.reason)(
  `the MongoDB store's per-event layout ${skipNote(mongo)}`.trim(),
  () => {
    /** A database holding the fixture's collections (with a batch a process left pending). */
    async function restored() {
      const { MongoClient } = await import("mongodb");
      const { EJSON } = await import("bson");
      const client = new MongoClient(mongo.url as string, { serverSelectionTimeoutMS: 5000 });
      await client.connect();
      const db = client.db(testDbName("bapi_usage_upgrade"));
      const dump = EJSON.parse(
        gunzipSync(readFileSync(join(FIXTURE, "mongo", "dump.json.gz"))).toString(),
        {
          relaxed: false,
        },
      ) as Record<string, Document[]>;
      for (const [name, docs] of Object.entries(dump)) {
        if (name.endsWith(".indexes") || docs.length === 0) continue;
        await db.collection(name).insertMany(docs);
      }
      return { client, db };
    }

    test("moved once at start under the projector's lease, the pending batch counted; answers, ids and cursors as before", async () => {
      const { MongoUsageLog } = await import("../../../src/usage/log/mongo");
      const { migrateMongo } = await import("../../../src/usage/log/mongo-migrate");
      const { client, db } = await restored();
      try {
        await MongoUsageLog.ensureIndexes(db);
        const log = new MongoUsageLog(db, { now, projectEveryMs: 0 });
        const logs = captureLogs();
        try {
          await migrateMongo(db, log, now());
        } finally {
          logs.restore();
        }
        const msgs = logs.lines.map((l) => l.msg);
        expect(msgs[0]).toBe("usage log: moving the per-event MongoDB layout (once)");
        expect(msgs).toContain("usage log: a batch left pending by the per-event layout counted");
        expect(msgs.at(-1)).toBe("usage log: per-event layout moved");
        const names = (await db.listCollections().toArray()).map((c) => c.name);
        for (const old of [
          "usage_events",
          "usage_rollups",
          "usage_batches",
          "usage_brands",
          "usage_daily",
        ])
          expect(names).not.toContain(old);
        compare(await recordedAnswers(log), readAnswers("mongo/answers.json.gz"));
        // once: a second start moves nothing
        const logs2 = captureLogs();
        try {
          await migrateMongo(db, log, now());
        } finally {
          logs2.restore();
        }
        expect(logs2.lines).toEqual([]);
        // new batches count on top of the moved cells
        await log.close();
      } finally {
        await db.dropDatabase();
        await client.close();
      }
    }, 120_000);
  },
);
