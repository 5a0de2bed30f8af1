import { afterEach, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../../../src/platform/ids";
import { EmbeddedUsageStore } from "../../../src/store/embedded/usage";
import { exportPage } from "../../../src/usage/analytics/export";
import type { ExportQuery, UsageEvent } from "../../../src/usage/port";
import { tempDir } from "../../support/temp";
import { event } from "../../usage/util";

/**
 * The embedded store's export through its per-day line index: only the account's lines are
 * read, and the index stays right across restarts, retention, appends racing a read, torn and
 * hand-written lines.
 */

const stores: EmbeddedUsageStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
const open = (dir: string) => {
  const s = new EmbeddedUsageStore(dir);
  stores.push(s);
  return s;
};

/** an event of `accountId` at `ts`, its id carrying that time (as the recorder makes them) */
const ev = (accountId: string, ts: string, over: Partial<UsageEvent> = {}): UsageEvent =>
  event({ id: newId(Date.parse(ts)), ts, day: ts.slice(0, 10), accountId, ...over });

const Q: ExportQuery = {
  from: "2025-03-01",
  to: "2025-03-31",
  after: null,
  before: "2025-04-01T00:00:00Z",
  limit: 50_000,
};

/** every page of the account, `limit` at a time, following the cursor */
async function all(store: EmbeddedUsageStore, accountId: string, limit: number) {
  const out: UsageEvent[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await store.exportEvents(accountId, { ...Q, after, limit });
    out.push(...page);
    if (page.length < limit) return out;
    after = page[page.length - 1]?.id ?? null;
  }
}

const ids = (events: UsageEvent[]) => events.map((e) => e.id);
/** the lines of an NDJSON chunk */
const linesOf = (chunk: Uint8Array) => new TextDecoder().decode(chunk).split("\n").filter(Boolean);
const sorted = (events: UsageEvent[]) => [...ids(events)].sort();

/** n events of two accounts interleaved over days 10..12, a few per millisecond */
function traffic(a: string, b: string, n: number) {
  const events: UsageEvent[] = [];
  for (let i = 0; i < n; i++) {
    const ms = Date.parse("2025-03-10T00:00:00Z") + Math.floor(i / 3) * 97_000;
    events.push(ev(i % 4 === 0 ? b : a, new Date(ms).toISOString()));
  }
  return events;
}

test("pages across days and chunks: every event of the account once, in id order, none of another", async () => {
  const dir = tempDir();
  const store = open(dir);
  // account ids one of which starts with the other: a line of one never counts for the other
  const events = traffic("acc", "acc-2", 9000);
  for (let i = 0; i < events.length; i += 1000) await store.append(events.slice(i, i + 1000));
  const mine = events.filter((e) => e.accountId === "acc");
  for (const limit of [2500, 50_000]) {
    const got = await all(store, "acc", limit);
    expect(ids(got)).toEqual(sorted(mine));
    expect(got.every((e) => e.accountId === "acc")).toBe(true);
  }
  expect(ids(await all(store, "acc-2", 1000))).toEqual(
    sorted(events.filter((e) => e.accountId === "acc-2")),
  );
  expect(await store.exportEvents("nobody", Q)).toEqual([]);
});

test("after a restart the index is built from the files; later appends are found", async () => {
  const dir = tempDir();
  const events = traffic("acc", "other", 3000);
  await open(dir).append(events);
  await stores.pop()?.close();
  const store = open(dir);
  const more = [ev("acc", "2025-03-12T23:00:00.000Z"), ev("acc", "2025-03-13T01:00:00.000Z")];
  await store.append(more);
  const got = await all(store, "acc", 700);
  expect(ids(got)).toEqual(sorted([...events, ...more].filter((e) => e.accountId === "acc")));
});

test("retention: a removed day is gone from the export; a page already chosen still reads out", async () => {
  const dir = tempDir();
  const store = open(dir);
  const events = traffic("acc", "other", 3000);
  await store.append(events);
  const page = await store.exportStream("acc", { ...Q, limit: 100_000 });
  await store.prune("2025-03-11");
  const lines: string[] = [];
  for (let c = await page.next(); c; c = await page.next()) lines.push(...linesOf(c));
  const mine = events.filter((e) => e.accountId === "acc");
  expect(lines.map((l) => (JSON.parse(l) as UsageEvent).id)).toEqual(sorted(mine));
  expect(ids(await all(store, "acc", 1000))).toEqual(
    sorted(mine.filter((e) => e.day >= "2025-03-11")),
  );
  // a day appended to again after its removal starts a new file and a new index
  const late = ev("acc", "2025-03-10T12:00:00.000Z");
  await store.append([late], { fresh: false });
  const again = await store.exportEvents("acc", { ...Q, to: "2025-03-10" });
  expect(ids(again)).toEqual([late.id]);
});

test("appends while a page is read and while the index catches up: nothing lost or repeated", async () => {
  const dir = tempDir();
  const store = open(dir);
  const events = traffic("acc", "other", 3000);
  await store.append(events);
  const page = await store.exportStream("acc", { ...Q, limit: 1000 });
  const during: UsageEvent[] = [];
  const read: string[] = [];
  const appends: Promise<number>[] = [];
  for (let c = await page.next(), k = 0; c; c = await page.next(), k++) {
    read.push(...linesOf(c));
    // each append races the next page's catch-up (not awaited before the export starts)
    const batch = [0, 1, 2].map((i) => ev("acc", `2025-03-12T2${k}:00:0${i}.000Z`));
    during.push(...batch);
    appends.push(store.append(batch));
    const racing = store.exportEvents("acc", { ...Q, limit: 10 });
    expect((await racing).length).toBe(10);
  }
  expect(read).toHaveLength(1000);
  await Promise.all(appends);
  const all_ = await all(store, "acc", 400);
  const mine = [...events, ...during].filter((e) => e.accountId === "acc");
  expect(ids(all_)).toEqual(sorted(mine));
  // the page read first is the start of the whole, in order
  expect(read.map((l) => (JSON.parse(l) as UsageEvent).id)).toEqual(sorted(mine).slice(0, 1000));
});

test("hand-written and torn lines: parsed and checked, never another account's", async () => {
  const dir = tempDir();
  const store = open(dir);
  const events = traffic("acc", "other", 30).filter((e) => e.day === "2025-03-10");
  await store.append(events);
  await stores.pop()?.close();
  const file = join(dir, "events", "2025-03-10.jsonl");
  const odd = ev("acc", "2025-03-10T05:00:00.000Z");
  const foreign = ev("other", "2025-03-10T05:00:01.000Z", { slug: '"accountId":"acc"' });
  // fields in another order; a line naming the account only in a text; a torn tail
  const { id, accountId, ...rest } = odd;
  appendFileSync(
    file,
    `${JSON.stringify({ accountId, ...rest, id })}\n${JSON.stringify(foreign)}\n{"id":"${newId()}","ts":`,
  );
  const store2 = open(dir);
  const got = await store2.exportEvents("acc", Q);
  const mine = [...events.filter((e) => e.accountId === "acc"), odd];
  expect(ids(got)).toEqual(sorted(mine));
  expect(got.find((e) => e.id === odd.id)).toEqual(odd);
  // the torn tail is terminated by the next append, which is then found
  const next = ev("acc", "2025-03-10T23:00:00.000Z");
  await store2.append([next]);
  expect(ids(await store2.exportEvents("acc", Q))).toEqual(sorted([...mine, next]));
  expect(readFileSync(file, "utf8")).toContain(next.id);
});

test("duplicate lines of one id (a replayed spill written twice by hand) are listed once", async () => {
  const dir = tempDir();
  const store = open(dir);
  const e = ev("acc", "2025-03-10T05:00:00.000Z");
  await store.append([e]);
  await store.close();
  stores.pop();
  const file = join(dir, "events", "2025-03-10.jsonl");
  appendFileSync(file, readFileSync(file));
  expect(ids(await open(dir).exportEvents("acc", Q))).toEqual([e.id]);
});

test("exportPage over the store: pages of several chunks, NDJSON and CSV, each line whole", async () => {
  const store = open(tempDir());
  const events = traffic("acc", "other", 12_000);
  await store.append(events);
  const mine = sorted(events.filter((e) => e.accountId === "acc"));
  const now = new Date("2025-04-01T00:00:00Z");
  const q = { from: "2025-03-01", to: "2025-03-31", limit: 5000 };
  const got: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await exportPage(store, "acc", { ...q, cursor }, 0, now);
    const lines = (await new Response(page.body).text()).split("\n").filter(Boolean);
    got.push(...lines.map((l) => (JSON.parse(l) as UsageEvent).id));
    if (!page.next) break;
    expect(page.next).toBe(got[got.length - 1] as string);
    cursor = page.next;
  }
  expect(got).toEqual(mine);
  const csv = await exportPage(store, "acc", { ...q, format: "csv" }, 0, now);
  const rows = (await new Response(csv.body).text()).trim().split("\n");
  expect(rows).toHaveLength(5001);
  expect(rows.slice(1).map((r) => r.slice(0, r.indexOf(",")))).toEqual(mine.slice(0, 5000));
});
