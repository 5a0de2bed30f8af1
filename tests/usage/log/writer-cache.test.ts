import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Database } from "../../../src/store/embedded/db";
import { EmbeddedWrites } from "../../../src/usage/log/embedded-writes";
import { tempDir } from "../../support/app";
import { batchesOf } from "../util";

/**
 * The writer keeps today's and yesterday's period rows decoded between appends, bounded by
 * their cells (not by rows: a busy account's row holds thousands): past the bound the least
 * recently written rows are dropped and read again when written next, with the same counts.
 */

const dir = tempDir("writer-cache-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NOW = Date.parse("2025-06-30T12:00:00Z");
const DAY = "2025-06-30";

test("rows kept decoded stay within the cell bound, and counts stay exact past it", () => {
  const db = new Database(join(dir, "usage.sqlite"));
  const writes = new EmbeddedWrites(db, { now: () => NOW, cacheCells: 300 });
  const accounts = Array.from({ length: 20 }, (_, i) => `acc-${i}`);
  // each account: 10 brands (cells of their own in every rollup), in three appends
  for (let round = 0; round < 3; round++) {
    writes.append(
      batchesOf(
        accounts.flatMap((accountId) =>
          Array.from({ length: 10 }, (_, j) => ({
            accountId,
            at: NOW - 60_000 + round * 1000 + j,
            slug: `brand-${j}`,
          })),
        ),
      ),
    );
    expect(writes.cachedCells).toBeGreaterThan(0);
    expect(writes.cachedCells).toBeLessThanOrEqual(300);
  }
  for (const accountId of accounts)
    expect(writes.dailyOf(accountId, DAY).get("svg")).toEqual({
      requests: 30,
      errors: 0,
      rateLimited: 0,
    });
  db.close();
});

test("under the bound every row written stays decoded", () => {
  const db = new Database(join(dir, "roomy.sqlite"));
  const writes = new EmbeddedWrites(db, { now: () => NOW });
  writes.append(batchesOf([{ accountId: "acc-a", at: NOW - 1000, slug: "github" }]));
  const one = writes.cachedCells;
  // a day row and an hour row, each with cells in every rollup
  expect(one).toBeGreaterThan(2);
  writes.append(batchesOf([{ accountId: "acc-b", at: NOW - 1000, slug: "github" }]));
  expect(writes.cachedCells).toBe(2 * one);
  db.close();
});
