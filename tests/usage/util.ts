import { afterAll, afterEach, beforeAll } from "bun:test";
import { join } from "node:path";
import { setLogLevel } from "../../src/platform/log";
import type { Tier } from "../../src/quota/limits";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import type { UsageEvent } from "../../src/usage/event";
import {
  type Batch,
  BatchBuilder,
  bucketIndex,
  eventsOf,
  latencyUs,
} from "../../src/usage/log/batch";
import { type EmbeddedLogOptions, EmbeddedUsageLog } from "../../src/usage/log/embedded";
import type { UsageLog } from "../../src/usage/log/port";
import type { LogRecorder, Metered, UsageRecorder } from "../../src/usage/log/recorder";
import { decodeRow, rowIds } from "../../src/usage/log/rows";
import { StringTable } from "../../src/usage/log/strings";
import { until } from "../support/wait";

export { until };

/** A metered request's event as a test states it (the fields the export lists, and its time). */
export interface Input {
  at: number;
  accountId: string;
  keyId: string;
  tier: Tier;
  bucket: UsageEvent["bucket"];
  route: string;
  slug: string | null;
  variant: string | null;
  format?: string;
  miss?: string[];
  status: number;
  latencyMs: number;
  /** folded 429 refusals (batchesOf only; the recorder folds them itself) */
  count?: number;
}

let seq = 0;
export function input(over: Partial<Input> = {}): Input {
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

/** What the metered macro hands the recorder for `i` (usage/meter.ts's Meter). */
export function meteredOf(i: Input): Metered {
  return {
    principal: { accountId: i.accountId, keyId: i.keyId, tier: i.tier, limits: null },
    bucket: i.bucket,
    at: new Date(i.at),
    route: i.route,
    slug: i.slug,
    variant: i.variant,
    format: i.format,
    miss: i.miss,
  };
}

/** Record an event as a metered request would. */
export const rec = (r: UsageRecorder, over: Partial<Input> = {}) => {
  const i = input(over);
  return r.record(meteredOf(i), i.status, Math.round(i.latencyMs * 1000));
};

/** The real log with a switch that makes appends fail, as an unreachable store would. */
export class SwitchableStore implements UsageLog {
  down = false;
  /** events per append that went through */
  batches: number[] = [];
  /** appends refused while down */
  refused = 0;
  constructor(readonly inner: UsageLog) {}
  async append(batches: Batch[]) {
    if (this.down) {
      this.refused++;
      throw new Error("event store unreachable");
    }
    const stored = await this.inner.append(batches);
    this.batches.push(batches.reduce((n, b) => n + b.n, 0));
    return stored;
  }
  daily(...a: Parameters<UsageLog["daily"]>) {
    return this.inner.daily(...a);
  }
  cells(...a: Parameters<UsageLog["cells"]>) {
    return this.inner.cells(...a);
  }
  misses(...a: Parameters<UsageLog["misses"]>) {
    return this.inner.misses(...a);
  }
  exportStream(...a: Parameters<UsageLog["exportStream"]>) {
    return this.inner.exportStream(...a);
  }
  events(...a: Parameters<UsageLog["events"]>) {
    return this.inner.events(...a);
  }
  tallyOfDay(day: string) {
    return this.inner.tallyOfDay(day);
  }
  holds(...a: Parameters<UsageLog["holds"]>) {
    return this.inner.holds(...a);
  }
  rebuild(...a: Parameters<UsageLog["rebuild"]>) {
    return this.inner.rebuild(...a);
  }
  prune(...a: Parameters<UsageLog["prune"]>) {
    return this.inner.prune(...a);
  }
  settled() {
    return this.inner.settled();
  }
  close() {
    return this.inner.close();
  }
}

export async function collect<T>(it: AsyncIterable<T> | Iterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/**
 * Wait until `n` usage events have been recorded in all (metered requests record theirs before
 * the response is handed back; requests still in flight have not), then write them and wait for
 * the store to count them.
 */
export async function settle(usage: UsageRecorder, n: number, store?: Pick<UsageLog, "settled">) {
  const w = usage as LogRecorder;
  await until(() => w.stats().recorded >= n, 4_000, `${n} recorded events`);
  await w.flush();
  await store?.settled();
}

/**
 * The events in an embedded store's log (of one UTC day), ascending by id: of an open database,
 * or of the database file under a DATA_DIR (opened and closed again).
 */
export function storedEvents(from: Database | string, day?: string): UsageEvent[] {
  const db = typeof from === "string" ? new Database(join(from, DB_FILE)) : from;
  try {
    const strings = new StringTable(db);
    const rows = db.all<{ a: number; t: number; q: number; d: Uint8Array }>(
      "SELECT a, t, q, d FROM usage_log ORDER BY a, t, q",
    );
    const out: UsageEvent[] = [];
    for (const r of rows) {
      strings.resolve(rowIds(r.d));
      for (const b of decodeRow(r.d, strings.str(r.a), r.t, r.q, strings))
        for (const e of eventsOf(b)) if (day === undefined || e.day === day) out.push(e);
    }
    return out.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  } finally {
    if (typeof from === "string") db.close();
  }
}

/**
 * `open(dir, opts)`: an EmbeddedUsageLog on `dir`, closed after the test; the file's tests run
 * at log level error.
 */
export function logOpener() {
  const logs: EmbeddedUsageLog[] = [];
  beforeAll(() => setLogLevel("error"));
  afterAll(() => setLogLevel("info"));
  afterEach(async () => {
    for (const s of logs.splice(0)) await s.close();
  });
  return (dir: string, opts: EmbeddedLogOptions = {}) => {
    const s = EmbeddedUsageLog.open(dir, opts);
    logs.push(s);
    return s;
  };
}

/** An account's stored events of one UTC day, in id order. */
export async function accountEvents(
  store: Pick<UsageLog, "events">,
  accountId: string,
  day: string,
): Promise<UsageEvent[]> {
  const out: UsageEvent[] = [];
  for await (const b of store.events(accountId, day, day)) for (const e of eventsOf(b)) out.push(e);
  return out;
}

/** Batches of inputs as the recorder makes them (ids derived from batch and position). */
export function batchesOf(inputs: Partial<Input>[]): Batch[] {
  const b = new BatchBuilder();
  for (const over of inputs) {
    const i = input(over);
    b.add(i.accountId, i.at, {
      key: b.ref(i.keyId),
      tier: b.ref(i.tier),
      route: b.ref(i.route),
      slug: b.ref(i.slug),
      variant: b.ref(i.variant),
      format: b.ref(i.format ?? null),
      bucket: bucketIndex(i.bucket),
      status: i.status,
      lat: latencyUs(i.latencyMs),
      count: i.count ?? 1,
      miss: i.miss?.map((m) => b.ref(m)) ?? null,
    });
  }
  return b.done();
}
