import { afterAll, afterEach, beforeAll } from "bun:test";
import { join } from "node:path";
import { setLogLevel } from "../../src/platform/log";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import { dayNumber, EmbeddedUsageStore } from "../../src/store/embedded/usage";
import type { UsageEvent, UsageEventStore, UsageInput, UsageRecorder } from "../../src/usage/port";
import type { BatchingRecorder } from "../../src/usage/writer";
import { until } from "../support/wait";

export { until };

let seq = 0;
/** What the metered macro records: the event without id, ts and day, plus its time `at`. */
export function input(over: Partial<UsageInput> = {}): UsageInput {
  seq++;
  return {
    at: Date.now(),
    accountId: "acc-1",
    keyId: "key-1",
    tier: "free",
    bucket: "svg",
    route: "/v1/svg/:slug",
    slug: `brand-${seq}`,
    variant: null,
    status: 200,
    latencyMs: 1.5,
    ...over,
  };
}

/** A complete event (for store tests). */
export function event(over: Partial<UsageEvent> = {}): UsageEvent {
  const ts = over.ts ?? new Date().toISOString();
  const { at: _at, ...fields } = input();
  return { id: Bun.randomUUIDv7(), ts, day: ts.slice(0, 10), ...fields, ...over };
}

/** The real store with a switch that makes appends fail, as an unreachable store would. */
export class SwitchableStore implements UsageEventStore {
  down = false;
  batches: number[] = [];
  /** appends refused while down */
  refused = 0;
  constructor(readonly inner: UsageEventStore) {}
  async append(events: UsageEvent[]) {
    if (this.down) {
      this.refused++;
      throw new Error("event store unreachable");
    }
    const stored = await this.inner.append(events);
    this.batches.push(events.length);
    return stored;
  }
  daily(accountId: string, from: string, to: string) {
    return this.inner.daily(accountId, from, to);
  }
  cells(...a: Parameters<UsageEventStore["cells"]>) {
    return this.inner.cells(...a);
  }
  cellCounts(...a: Parameters<UsageEventStore["cellCounts"]>) {
    return this.inner.cellCounts(...a);
  }
  misses(...a: Parameters<UsageEventStore["misses"]>) {
    return this.inner.misses(...a);
  }
  exportEvents(...a: Parameters<UsageEventStore["exportEvents"]>) {
    return this.inner.exportEvents(...a);
  }
  eventsOfDay(day: string) {
    return this.inner.eventsOfDay(day);
  }
  rebuildDaily() {
    return this.inner.rebuildDaily();
  }
  prune(beforeDay: string) {
    return this.inner.prune(beforeDay);
  }
  close() {
    return this.inner.close();
  }
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/**
 * Wait until `n` usage events have been recorded in all (metered requests record theirs before
 * the response is handed back; requests still in flight have not), then write them.
 */
export async function settle(usage: UsageRecorder, n: number) {
  const w = usage as BatchingRecorder;
  await until(() => w.stats().recorded >= n, 4_000, `${n} recorded events`);
  await w.flush();
}

/**
 * The events in an embedded store's log (of one UTC day), ascending by id: of an open database,
 * or of the database file under a DATA_DIR (opened and closed again).
 */
export function storedEvents(from: Database | string, day?: string): UsageEvent[] {
  const db = typeof from === "string" ? new Database(join(from, DB_FILE)) : from;
  try {
    const rows =
      day === undefined
        ? db.all<{ e: string }>("SELECT e FROM usage_events ORDER BY id")
        : db.all<{ e: string }>(
            "SELECT e FROM usage_events WHERE day = ? ORDER BY id",
            dayNumber(day),
          );
    return rows.map((r) => JSON.parse(r.e) as UsageEvent);
  } finally {
    if (typeof from === "string") db.close();
  }
}

/**
 * `open(dir, opts)`: an EmbeddedUsageStore on `dir`, closed after the test; the file's tests
 * run at log level error.
 */
export function storeOpener() {
  const stores: EmbeddedUsageStore[] = [];
  beforeAll(() => setLogLevel("error"));
  afterAll(() => setLogLevel("info"));
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  return (dir: string, opts: Parameters<typeof EmbeddedUsageStore.open>[1] = {}) => {
    const s = EmbeddedUsageStore.open(dir, opts);
    stores.push(s);
    return s;
  };
}
