import { expect, test } from "bun:test";
import { EmbeddedVisitorStore } from "../../../src/visitor-counter/store/embedded";
import { MongoVisitorStore } from "../../../src/visitor-counter/store/mongo";
import type { VisitorCountStore } from "../../../src/visitor-counter/store/port";
import { portContract } from "../../support/port-contract";

/** The visitor counter store's contract (the running total, the secret), on both adapters. */
portContract<VisitorCountStore>(
  "visitor counter",
  {
    embedded: (db) => new EmbeddedVisitorStore(db),
    mongo: async (db) => new MongoVisitorStore(db),
  },
  (get) => {
    test("visitor total counts up and the secret is made once", async () => {
      const visitors = await get();
      const start = await visitors.total();
      expect(await visitors.increment()).toBe(start + 1);
      expect(await visitors.increment()).toBe(start + 2);
      expect(await visitors.total()).toBe(start + 2);
      const secret = await visitors.secret();
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      expect(await visitors.secret()).toBe(secret);
    });

    test("visitor total: concurrent first increments all count; one secret for every caller", async () => {
      const v = await get();
      const before = await v.total();
      const totals = await Promise.all(Array.from({ length: 8 }, () => v.increment()));
      expect(await v.total()).toBe(before + 8);
      for (const t of totals) expect(t).toBeGreaterThan(before);
      const secrets = await Promise.all([v.secret(), v.secret(), v.secret()]);
      expect(new Set(secrets).size).toBe(1);
      expect(secrets[0]).toMatch(/^[0-9a-f]{64}$/);
    });
  },
);
