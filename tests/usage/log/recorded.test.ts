import { afterAll, beforeAll, expect, test } from "bun:test";
import { setLogLevel } from "../../../src/platform/log";
import { batchesOfEvents } from "../../../src/usage/log/batch";
import { describeUnless } from "../../support/skip";
import {
  freshBatches,
  RECORDED_ACCOUNTS,
  RECORDED_NOW,
  RECORDED_QUERIES,
  readAnswers,
  recordedAnswers,
  recordedEvents,
} from "../../support/usage-recorded";
import { type OpenedLog, usageLogKinds } from "../../support/usage-stores";

/**
 * The recorded event set (tests/fixtures/usage-recorded): the log answers every analytics query
 * exactly as the per-event log did, and its export lists the same events with the same fields.
 */

for (const kind of await usageLogKinds())
  describeUnless(kind.skip)(`the recorded event set: ${kind.name}`, () => {
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
