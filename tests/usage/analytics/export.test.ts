import { expect, test } from "bun:test";
import { exportPage } from "../../../src/usage/analytics/export";
import type { UsageEvent } from "../../../src/usage/event";
import { eventsOf } from "../../../src/usage/log/batch";
import { tempDir } from "../../support/temp";
import { batchesOf, type Input, logOpener } from "../util";

/** exportPage over the real embedded usage log, holding `events` of account "acc". */
const open = logOpener();
async function storeOf(events: Partial<Input>[]) {
  const store = open(tempDir(), { writer: "inline" });
  const batches = batchesOf(events);
  await store.append(batches);
  return { store, events: batches.flatMap((b) => eventsOf(b)) };
}

const NOW = new Date("2025-03-31T12:00:00Z");
const at = (ts: string) => Date.parse(ts);
const acc = (over: Partial<Input>): Partial<Input> => ({ accountId: "acc", ...over });

test("CSV: RFC 4180 quoting; a text a spreadsheet would run as a formula is defused", async () => {
  const e = acc({ at: at("2025-03-30T10:00:00.000Z"), slug: "=HYPERLINK(1)", route: 'a,"b"' });
  e.miss = ["query:x", "slug:+1"];
  const { store } = await storeOf([e]);
  const page = await exportPage(store, "acc", { format: "csv", to: "2025-03-31" }, 0, NOW);
  const [head, row] = (await new Response(page.body).text()).trim().split("\n");
  expect(head).toBe(
    "id,ts,day,accountId,keyId,tier,bucket,route,slug,variant,format,miss,status,latencyMs,count",
  );
  expect(row).toContain(`,"a,""b""",'=HYPERLINK(1),,,query:x slug:+1,200,1.5,`);
  expect(page.contentType).toBe("text/csv; charset=utf-8");
});

test("NDJSON: one stored event per line; a full page names its last id as the next cursor", async () => {
  // a batch per minute: the first three on one day, a settling one, another account's
  const inputs = [1, 2, 3].map((i) => acc({ at: at(`2025-03-30T10:0${i}:00.000Z`) }));
  // metered 10 s before NOW: inside the 30 s settle time, so not exported yet
  const settling = acc({ at: at("2025-03-31T11:59:50.000Z") });
  const made = await storeOf([...inputs, settling, { at: at("2025-03-30T10:00:00.000Z") }]);
  const store = made.store;
  const events: UsageEvent[] = made.events.filter((e) => e.accountId === "acc").slice(0, 3);
  const full = await exportPage(store, "acc", { limit: 2, to: "2025-03-31" }, 30_000, NOW);
  const lines = (await new Response(full.body).text()).trim().split("\n");
  expect(lines.map((l) => JSON.parse(l))).toEqual(events.slice(0, 2));
  expect(full.next).toBe(events[1]?.id ?? "");
  // the rest: the third event only (another account's and the settling one are left out)
  const last = await exportPage(
    store,
    "acc",
    { limit: 5, to: "2025-03-31", cursor: full.next ?? undefined },
    30_000,
    NOW,
  );
  expect(last.next).toBeNull();
  expect(await new Response(last.body).text()).toBe(`${JSON.stringify(events[2])}\n`);
  // with no settle time the settling event is exported too
  const all = await exportPage(store, "acc", { limit: 5, to: "2025-03-31" }, 0, NOW);
  expect((await new Response(all.body).text()).trim().split("\n")).toHaveLength(4);
});

test("an empty page: no body in NDJSON, the header alone in CSV", async () => {
  const { store } = await storeOf([]);
  const nd = await exportPage(store, "acc", {}, 0, NOW);
  expect(await new Response(nd.body).text()).toBe("");
  const csv = await exportPage(store, "acc", { format: "csv" }, 0, NOW);
  expect((await new Response(csv.body).text()).split("\n")).toHaveLength(2);
});
