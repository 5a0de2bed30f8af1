/**
 * The embedded discovery store where its contract does not reach: polling across two
 * connections on one DATA_DIR (the service and the admin CLI are two processes).
 */
import { afterEach, expect, setSystemTime, test } from "bun:test";
import { emptyRecord } from "../../../../src/catalog/discovery/records";
import { EmbeddedDiscoveryStore } from "../../../../src/catalog/discovery/store/embedded";
import type { DiscoveryRecord } from "../../../../src/catalog/discovery/store/port";
import type { Database } from "../../../../src/store/embedded/db";
import { closeConnections, connections } from "../../../support/db";

afterEach(closeConnections);

test("discoveries: a poll sees a record another connection stored after `since`, even with an older `at`; a takedown is final", async () => {
  const [a, b] = connections(2) as [Database, Database];
  const [ea, eb] = [new EmbeddedDiscoveryStore(a), new EmbeddedDiscoveryStore(b)];
  const rec = (domain: string, at: string, status: DiscoveryRecord["status"] = "nothing") => ({
    ...emptyRecord(domain, null),
    at,
    status,
  });
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  // the store stamps each row with the clock's time: the clock is set, a second a step
  const t0 = Date.now();
  const since = new Date(t0 + 1000).toISOString();
  try {
    setSystemTime(new Date(t0));
    await ea.saveDiscovery(rec("one.test", ago(1000)));
    expect(await ea.discoveries(since)).toEqual([]);
    // the other process finished a discovery that began before `since`, and stores it now
    setSystemTime(new Date(t0 + 2000));
    await eb.saveDiscovery(rec("two.test", ago(10_000)));
  } finally {
    setSystemTime();
  }
  expect((await ea.discoveries(since)).map((r) => r.domain)).toEqual(["two.test"]);
  await eb.saveDiscovery(rec("two.test", ago(0), "taken_down"));
  const kept = await ea.saveDiscovery(rec("two.test", ago(0), "found"));
  expect(kept.status).toBe("taken_down");
  expect((await eb.discovery("two.test"))?.status).toBe("taken_down");
});
