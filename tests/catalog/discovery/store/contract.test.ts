import { expect, test } from "bun:test";
import { emptyRecord } from "../../../../src/catalog/discovery/records";
import { EmbeddedDiscoveryStore } from "../../../../src/catalog/discovery/store/embedded";
import { MongoDiscoveryStore } from "../../../../src/catalog/discovery/store/mongo";
import type { DiscoveryRecord, DiscoveryStore } from "../../../../src/catalog/discovery/store/port";
import { portContract } from "../../../support/port-contract";

/**
 * The discovery store's contract on both adapters: one record per domain, replaced whole, a
 * takedown final, polling by time, and the found records due to be checked again.
 */
portContract<DiscoveryStore>(
  "discovery",
  {
    embedded: (db) => new EmbeddedDiscoveryStore(db),
    mongo: async (db) => {
      await MongoDiscoveryStore.ensureIndexes(db);
      return new MongoDiscoveryStore(db);
    },
  },
  (get) => {
    let n = 0;
    /** a record of a domain no other test uses */
    const record = (fields: Partial<DiscoveryRecord> = {}): DiscoveryRecord => ({
      ...emptyRecord(`d${++n}-${Date.now().toString(36)}.test`, null),
      ...fields,
    });

    test("a domain's record is stored and read back, and replaced whole by the next", async () => {
      const store = await get();
      const first = record({ status: "found", pinned: ["color"], reason: "first" });
      expect(await store.saveDiscovery(first)).toEqual(first);
      expect(await store.discovery(first.domain)).toEqual(first);
      const { pinned: _, ...next } = { ...first, status: "nothing" as const, reason: "again" };
      await store.saveDiscovery(next);
      // a field the new record lacks does not survive from the old one
      expect(await store.discovery(first.domain)).toEqual(next);
      expect((await store.discoveries()).filter((r) => r.domain === first.domain)).toEqual([next]);
      expect(await store.discovery("never-discovered.test")).toBeNull();
    });

    test("a taken-down record is final: a later record is not stored, the takedown is returned", async () => {
      const store = await get();
      const down = record({ status: "taken_down", by: "operator@test" });
      await store.saveDiscovery(down);
      const { by: _, ...rest } = down;
      const kept = await store.saveDiscovery({ ...rest, status: "found" });
      expect(kept).toMatchObject({ status: "taken_down", by: "operator@test" });
      expect((await store.discovery(down.domain))?.status).toBe("taken_down");
    });

    test("a poll with `since` lists the records of later attempts only", async () => {
      const store = await get();
      const since = new Date(Date.now() + 60_000).toISOString();
      const before = record({ at: new Date(Date.now() - 60_000).toISOString() });
      const after = record({ at: new Date(Date.now() + 120_000).toISOString() });
      await store.saveDiscovery(before);
      await store.saveDiscovery(after);
      const polled = (await store.discoveries(since)).map((r) => r.domain);
      expect(polled).toContain(after.domain);
      expect(polled).not.toContain(before.domain);
    });

    test("due: found records past their refreshAt, or without one and stale, soonest first, at most limit", async () => {
      const store = await get();
      // far in the past, so no other test's record is due before these
      const at = (y: number) => new Date(Date.UTC(y, 0, 1)).toISOString();
      const late = record({ status: "found", at: at(1990), refreshAt: at(1993) });
      const soon = record({ status: "found", at: at(1990), refreshAt: at(1991) });
      const stale = record({ status: "found", at: at(1992) });
      const fresh = record({ status: "found", at: at(1990), refreshAt: at(2990) });
      const nothing = record({ status: "nothing", at: at(1990), refreshAt: at(1990) });
      for (const r of [late, soon, stale, fresh, nothing]) await store.saveDiscovery(r);
      const due = await store.discoveriesDue(at(1995), at(1994), 10);
      const ours = new Set([late, soon, stale, fresh, nothing].map((r) => r.domain));
      expect(due.filter((r) => ours.has(r.domain)).map((r) => r.domain)).toEqual([
        soon.domain,
        stale.domain,
        late.domain,
      ]);
      expect(await store.discoveriesDue(at(1995), at(1994), 2)).toHaveLength(2);
    });
  },
);
