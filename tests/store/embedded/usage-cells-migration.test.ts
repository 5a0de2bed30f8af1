import { expect, test } from "bun:test";
import type { Principal } from "../../../src/accounts/model";
import { newId } from "../../../src/platform/ids";
import { captureLogs } from "../../../src/platform/log";
import { EmbeddedUsageStore } from "../../../src/store/embedded/usage";
import { usageSeries } from "../../../src/usage/analytics/series";
import type { UsageEvent } from "../../../src/usage/port";
import { tempDir } from "../../support/temp";

/**
 * A database whose analytics cells have the older layout (no brand bound, `all` keys led by the
 * bucket, usage_meta `cells` 1) is migrated once when the store opens: the days in the log are
 * rebuilt, and older days' `all` cells are read with their brand.
 */

const ACC = "acc-m";
const principal = { accountId: ACC, tier: "pro", keyId: "key-a" } as Principal;
const NOW = new Date("2025-03-31T12:00:00Z");

const ev = (ts: string, slug: string, keyId: string): UsageEvent => ({
  id: newId(Date.parse(ts)),
  ts,
  day: ts.slice(0, 10),
  accountId: ACC,
  keyId,
  tier: "pro",
  bucket: "svg",
  route: "/v1/svg/:slug",
  slug,
  variant: "mono",
  format: "svg",
  status: 200,
  latencyMs: 2,
});

test("cells of the older layout are migrated once at open", async () => {
  const dir = tempDir("usage-mig-");
  const store = EmbeddedUsageStore.open(dir, { writer: "inline" });
  await store.append([
    ev("2025-03-20T09:00:00.000Z", "github", "key-a"),
    ev("2025-03-20T09:10:00.000Z", "github", "key-b"),
    ev("2025-03-20T10:00:00.000Z", "gitlab", "key-a"),
  ]);
  const q = { from: "2025-03-19", to: "2025-03-20", group_by: "brand,key" };
  const live = await usageSeries(store, principal, q, NOW);
  const db = store.db;
  // the older layout: `all` keys bucket|key|brand|..., no usage_brands, version 1
  const rows = db.all<{ view: number; period: string; key: string }>(
    "SELECT view, period, key FROM usage_cells WHERE view IN (4, 9)",
  );
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) {
    const [brand, bucket, key, ...rest] = r.key.split("|");
    db.run(
      "UPDATE usage_cells SET key = ? WHERE view = ? AND period = ? AND account = ? AND key = ?",
      [bucket, key, brand, ...rest].join("|"),
      r.view,
      r.period,
      ACC,
      r.key,
    );
  }
  db.run("DELETE FROM usage_brands");
  db.run("UPDATE usage_meta SET value = 1 WHERE name = 'cells'");
  const cell =
    "INSERT INTO usage_cells (view, period, account, key, n, e, r, h) VALUES (?, ?, ?, ?, ?, 0, 0, X'')";
  // a day no longer in the log (pruned), in the older `all` layout: kept, read with its brand
  db.run(cell, 4, "2025-03-19", ACC, "svg|key-a|old-brand|mono|svg|200", 5);
  // a cell the log does not hold on a day in the log: gone with the rebuild
  db.run(cell, 2, "2025-03-20", ACC, "zzz|200", 7);
  await store.close();

  const logs = captureLogs();
  let again: EmbeddedUsageStore;
  try {
    again = EmbeddedUsageStore.open(dir, { writer: "inline" });
  } finally {
    logs.restore();
  }
  expect(logs.lines.map((l) => l.msg)).toEqual([
    "usage analytics cells migrated to bounded brands",
  ]);
  const got = await usageSeries(again, principal, q, NOW);
  expect(got.groups.map((g) => [g.brand, g.key, g.requests])).toEqual([
    ["old-brand", "key-a", 5],
    ["github", "key-a", 1],
    ["github", "key-b", 1],
    ["gitlab", "key-a", 1],
  ]);
  expect(got.series[1]).toEqual(live.series[1] as (typeof live.series)[number]);
  const brands = await usageSeries(
    again,
    principal,
    { from: "2025-03-20", to: "2025-03-20", group_by: "brand" },
    NOW,
  );
  expect(brands.groups.map((g) => g.brand)).toEqual(["github", "gitlab"]);
  expect(again.db.all("SELECT brand FROM usage_brands WHERE period = '2025-03-20'").length).toBe(2);
  await again.close();

  // once: the next open migrates nothing
  const logs2 = captureLogs();
  try {
    await EmbeddedUsageStore.open(dir, { writer: "inline" }).close();
  } finally {
    logs2.restore();
  }
  expect(logs2.lines).toEqual([]);
});
