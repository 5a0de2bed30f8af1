import { expect, test } from "bun:test";
import { exportPage } from "../../../src/usage/analytics/export";
import type { ExportQuery, UsageEvent, UsageEventStore } from "../../../src/usage/port";
import { event } from "../util";

/** exportPage over a store that answers one fixed page (and records what it was asked). */
function storeOf(events: UsageEvent[]) {
  const asked: ExportQuery[] = [];
  const store = {
    exportEvents: async (_account: string, q: ExportQuery) => {
      asked.push(q);
      return events.slice(0, q.limit);
    },
  } as unknown as UsageEventStore;
  return { store, asked };
}

const NOW = new Date("2025-03-31T12:00:00Z");

test("CSV: RFC 4180 quoting; a text a spreadsheet would run as a formula is defused", async () => {
  const e = event({ ts: "2025-03-30T10:00:00.000Z", slug: "=HYPERLINK(1)", route: 'a,"b"' });
  e.miss = ["query:x", "slug:+1"];
  const { store } = storeOf([e]);
  const page = await exportPage(store, "acc", { format: "csv", to: "2025-03-31" }, 0, NOW);
  const [head, row] = (await new Response(page.body).text()).trim().split("\n");
  expect(head).toBe(
    "id,ts,day,accountId,keyId,tier,bucket,route,slug,variant,format,miss,status,latencyMs,count",
  );
  expect(row).toContain(`,"a,""b""",'=HYPERLINK(1),,,query:x slug:+1,200,1.5,`);
  expect(page.contentType).toBe("text/csv; charset=utf-8");
});

test("NDJSON: one stored event per line; a full page names its last id as the next cursor", async () => {
  const events = [1, 2, 3].map((i) => event({ ts: `2025-03-30T10:00:0${i}.000Z` }));
  const { store, asked } = storeOf(events);
  const full = await exportPage(store, "acc", { limit: 2, to: "2025-03-31" }, 30_000, NOW);
  const lines = (await new Response(full.body).text()).trim().split("\n");
  expect(lines.map((l) => JSON.parse(l))).toEqual(events.slice(0, 2));
  expect(full.next).toBe(events[1]?.id ?? "");
  // only events metered at least the settle time ago
  expect(asked[0]?.before).toBe("2025-03-31T11:59:30.000Z");
  const last = await exportPage(store, "acc", { limit: 5, to: "2025-03-31" }, 0, NOW);
  expect(last.next).toBeNull();
  expect(await new Response(last.body).text()).toHaveLength(
    events.map((e) => JSON.stringify(e).length + 1).reduce((a, b) => a + b),
  );
});

test("an empty page: no body in NDJSON, the header alone in CSV", async () => {
  const { store } = storeOf([]);
  const nd = await exportPage(store, "acc", {}, 0, NOW);
  expect(await new Response(nd.body).text()).toBe("");
  const csv = await exportPage(store, "acc", { format: "csv" }, 0, NOW);
  expect((await new Response(csv.body).text()).split("\n")).toHaveLength(2);
});
