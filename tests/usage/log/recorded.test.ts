import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { setLogLevel } from "../../../src/platform/log";
import type { Principal } from "../../../src/quota/principal";
import { exportPage } from "../../../src/usage/analytics/export";
import { rankedMisses } from "../../../src/usage/analytics/misses";
import { usageSeries, wantsSeries } from "../../../src/usage/analytics/series";
import { usageHistory } from "../../../src/usage/analytics/service";
import { BatchBuilder, batchesOfEvents, bucketIndex, latencyUs } from "../../../src/usage/log/batch";
import type { UsageLog } from "../../../src/usage/log/port";
import type { UsageEvent } from "../../../src/usage/event";
import {
  RECORDED_ACCOUNTS,
  RECORDED_NOW,
  RECORDED_QUERIES,
  recordedEvents,
} from "../../support/usage-recorded";
import { type OpenedLog, usageLogKinds } from "../../support/usage-stores";

/**
 * The recorded event set (tests/fixtures/usage-recorded): the log answers every analytics query
 * exactly as the per-event log did, and its export lists the same events with the same fields.
 */

const FIXTURE = join(import.meta.dir, "../../fixtures/usage-recorded");
export const readAnswers = (path: string) =>
  JSON.parse(gunzipSync(readFileSync(join(FIXTURE, path))).toString()) as Record<
    string,
    Record<string, unknown>
  >;

const parse = (q: string) => {
  const o: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(q)) o[k] = k === "limit" ? Number(v) : v;
  return o;
};
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** What the service answers for the recorded queries (the fixture's shape). */
export async function recordedAnswers(store: UsageLog) {
  const out: Record<string, Record<string, unknown>> = {};
  for (const acc of RECORDED_ACCOUNTS) {
    const p = { accountId: acc, tier: "pro", keyId: null, limits: null } as Principal;
    const a: Record<string, unknown> = {};
    for (const q of RECORDED_QUERIES) {
      const query = parse(q);
      a[q] = wantsSeries(query)
        ? await usageSeries(store, p, query, RECORDED_NOW)
        : await usageHistory(store, p, query, RECORDED_NOW);
    }
    a.misses = await rankedMisses(store, acc, { from: "2026-01-01" }, RECORDED_NOW);
    const all: string[] = [];
    const cursors: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await exportPage(
        store,
        acc,
        { from: "2026-01-01", to: "2026-01-08", limit: 37, cursor },
        30_000,
        RECORDED_NOW,
      );
      const text = await new Response(page.body).text();
      all.push(...text.split("\n").filter(Boolean));
      if (!page.next) break;
      cursor = page.next;
      cursors.push(cursor);
    }
    const csv = await exportPage(
      store,
      acc,
      { from: "2026-01-01", to: "2026-01-08", limit: 50000, format: "csv" },
      30_000,
      RECORDED_NOW,
    );
    const csvText = await new Response(csv.body).text();
    const noIds = all.map((l) => {
      const { id: _id, ...rest } = JSON.parse(l);
      return JSON.stringify(rest);
    });
    a.export = {
      events: all.length,
      cursors,
      ndjson: sha(`${all.join("\n")}\n`),
      ndjsonWithoutIds: sha(`${noIds.join("\n")}\n`),
      csv: sha(csvText),
      csvHead: csvText.split("\n").slice(0, 3),
    };
    out[acc] = a;
  }
  out.allMisses = await rankedMisses(store, null, { from: "2026-01-01", limit: 1000 }, RECORDED_NOW);
  return out;
}

/** The recorded events as the recorder batches them: ids derived from batch and position. */
export function freshBatches(events: UsageEvent[]) {
  const b = new BatchBuilder();
  for (const e of events)
    b.add(e.accountId, Date.parse(e.ts), {
      key: b.ref(e.keyId),
      tier: b.ref(e.tier),
      route: b.ref(e.route),
      slug: b.ref(e.slug),
      variant: b.ref(e.variant),
      format: b.ref(e.format ?? null),
      bucket: bucketIndex(e.bucket),
      status: e.status,
      lat: latencyUs(e.latencyMs),
      count: e.count ?? 1,
      miss: e.miss?.map((m) => b.ref(m)) ?? null,
    });
  return b.done();
}

for (const kind of await usageLogKinds())
  describe.skipIf(kind.skip)(`the recorded event set: ${kind.name}`, () => {
    const want = readAnswers("answers.json.gz");
    beforeAll(() => setLogLevel("error"));
    afterAll(() => setLogLevel("info"));

    const compare = (got: Record<string, Record<string, unknown>>, withIds: boolean) => {
      for (const acc of RECORDED_ACCOUNTS) {
        for (const q of [...RECORDED_QUERIES, "misses"])
          expect({ acc, q, answer: got[acc]?.[q] }).toEqual({ acc, q, answer: want[acc]?.[q] });
        const x = got[acc]?.export as Record<string, unknown>;
        const y = want[acc]?.export as Record<string, unknown>;
        expect(x.events).toBe(y.events);
        expect(x.ndjsonWithoutIds).toBe(y.ndjsonWithoutIds);
        if (withIds) expect(x).toEqual(y);
      }
      expect(got.allMisses).toEqual(want.allMisses);
    };

    test("events that keep their ids: every answer and the export (ids, cursors) the same", async () => {
      const opened: OpenedLog = await kind.open({ now: () => RECORDED_NOW.getTime() });
      try {
        await opened.log.append(batchesOfEvents(recordedEvents()));
        await opened.log.settled();
        compare(await recordedAnswers(opened.log), true);
      } finally {
        await opened.drop();
      }
    });

    test("events batched as the recorder does, 50 at a time: the same answers and export fields", async () => {
      const opened: OpenedLog = await kind.open({ now: () => RECORDED_NOW.getTime() });
      try {
        const events = recordedEvents();
        for (let i = 0; i < events.length; i += 50)
          await opened.log.append(freshBatches(events.slice(i, i + 50)));
        await opened.log.settled();
        compare(await recordedAnswers(opened.log), false);
      } finally {
        await opened.drop();
      }
    });
  });
