import {
  type AnyBulkWriteOperation,
  type Collection,
  type Db,
  type Filter,
  MongoBulkWriteError,
  ObjectId,
  type OptionalUnlessRequiredId,
  type WriteError,
} from "mongodb";
import { DAY_MS, dayStart, utcDay } from "../../platform/day";
import { log } from "../../platform/log";
import type { CountableEvent } from "../../quota/gate";
import type { Bucket } from "../../quota/limits";
import type { Granularity, Rollup } from "../analytics/cells";
import {
  type Batch,
  countablesOf,
  dayNo,
  emptyBatch,
  idOf,
  nextQ,
  parseEventId,
  sameBatch,
} from "./batch";
import { exportLines } from "./export-lines";
import {
  cellsOfDoc,
  DocStrings,
  type PeriodDoc,
  periodFields,
  readDocCells,
} from "./mongo-periods";
import { foldBatch, missesOfBatch, OTHER, PeriodCells, rollupNo } from "./period";
import {
  byDayAndBucket,
  type CellHint,
  type DailyRow,
  dailyRowsOf,
  type ExportQuery,
  type ExportStream,
  firstHourKept,
  type PeriodRow,
  type StoreBacklog,
  type UsageLog,
} from "./port";

/**
 * The MongoDB usage log (docs/mongodb.md):
 *  - `usage_log`: one document per batch (the bucket pattern): `_id` `account|t0|q` (t0 and q
 *    as 13-digit numbers, so ids sort by account, time and batch), `a`, `t` (a Date), the
 *    events as columnar arrays of ints (`dt`, `k`, `tr`, `r`, `sl`, `v`, `f`, `b`, `st`, `l`,
 *    and `c`, `x`, `ids` when needed) indexing the document's strings `s`. Insert-only,
 *    idempotent on `_id`.
 *  - `usage_pending`: a small document per batch not counted yet (`_id` the batch's), inserted
 *    before the batch; `usage_counted`: one per batch counted. So a batch's state is read and
 *    written without rewriting its document (which FerretDB does whole, slowly).
 *  - `usage_periods`: one document per account and period (`_id` `account|d|YYYY-MM-DD` or
 *    `account|h|YYYY-MM-DDTHH`): its cells as the bytes the embedded store's period rows hold
 *    (`d`, with its strings `s`: mongo-periods.ts), and `m`, the group that last counted into it.
 *  - `usage_misses`: one document per account, day and miss (`n`, `m`).
 *  - `usage_projector`: the projector's lease (`_id` "lease") and its group under way ("group").
 *  - `usage_daily_kept`: counts of days the per-event layout kept apart from their cells.
 *
 * Appends only insert. The projections are written by one projector at a time, across every
 * instance: the holder of the lease (inserted to take it, renewed while held, taken over once it
 * ran out). It takes pending batches (oldest id first; those counted already or not stored yet
 * left out), records them as its group (`usage_projector` "group": their ids and a new group id),
 * counts them into every period and miss document they touch (each read first: one whose `m` is
 * the group is left as it is; the others are written with the group as their new `m`, on the
 * condition that `m` is still what was read), records them as counted, drops their pending
 * documents, and clears the group. A projector that dies anywhere leaves the group recorded: the
 * next holder counts it again, and the documents it had reached are left out by their `m`. A
 * batch appended again after it was counted (a retry, a replayed spill file) finds its counted
 * document and is not counted again. So every batch is counted once, with no window, and no
 * document is ever written by two processes at once.
 */

/** How long a lease lasts unless its holder renews it (every third of it). */
const LEASE_MS = 10_000;
/** How often an instance looks for batches to count (the holder), or for a lease to take. */
const PROJECT_EVERY_MS = 200;
/**
 * Batches one group counts: each of its documents is written once per group, so a backlog is
 * counted in large groups (a few seconds of heavy traffic each).
 */
const GROUP_BATCHES = 4000;
/**
 * Updates per bulk write. FerretDB v1 on PostgreSQL stops answering once one bulk write updates
 * about 48 or more existing documents; the adapter never sends more than this, on any server.
 */
const UPDATES_PER_BULK = 32;
/**
 * A pending document whose batch is not in the log this long after it was written is dropped:
 * its append failed (the batch then goes to a spill file, whose replay writes it again) or its
 * process died before the insert.
 */
const ORPHAN_MS = 10 * 60_000;
/** Log documents per query of the export and the walks. */
const READ_DOCS = 1000;
const DUPLICATE_KEY = 11000;

const pad = (n: number) => String(Math.max(0, Math.floor(n))).padStart(13, "0");
/** A batch's `_id`. */
export const batchId = (account: string, t0: number, q: number) =>
  `${account}|${pad(t0)}|${pad(q)}`;

/** A batch as stored. */
export interface LogDoc {
  _id: string;
  a: string;
  t: Date;
  q: number;
  n: number;
  s: string[];
  dt: number[];
  k: number[];
  tr: number[];
  r: number[];
  sl: number[];
  v: number[];
  f: number[];
  b: number[];
  st: number[];
  l: number[];
  c?: number[];
  /** misses: [position, string index, string index, ..., -1, position, ...] */
  x?: number[];
  ids?: string[];
}

/** A batch not counted yet (`w`: when this was written), or one counted (usage_counted). */
interface StateDoc {
  _id: string;
  /** the batch's time (retention) */
  t: Date;
  w?: Date;
}

interface MissDoc {
  _id: string;
  a: string;
  day: string;
  miss: string;
  n?: number;
  m?: unknown;
}

interface Lease {
  _id: "lease";
  owner: string;
  until: number;
}

interface GroupDoc {
  _id: "group";
  g: string;
  ids: string[];
}

export function docOfBatch(b: Batch): LogDoc {
  const doc: LogDoc = {
    _id: batchId(b.account, b.t0, b.q),
    a: b.account,
    t: new Date(b.t0),
    q: b.q,
    n: b.n,
    s: b.strings,
    dt: Array.from(b.at, (x) => x - b.t0),
    k: Array.from(b.key),
    tr: Array.from(b.tier),
    r: Array.from(b.route),
    sl: Array.from(b.slug),
    v: Array.from(b.variant),
    f: Array.from(b.format),
    b: Array.from(b.bucket),
    st: Array.from(b.status),
    l: Array.from(b.lat),
  };
  if (b.count) doc.c = Array.from(b.count);
  if (b.miss) {
    const x: number[] = [];
    b.miss.forEach((m, i) => {
      if (m) x.push(i, ...m, -1);
    });
    doc.x = x;
  }
  if (b.ids) doc.ids = b.ids;
  return doc;
}

export function batchOfDoc(d: LogDoc): Batch {
  const b = emptyBatch(d.a, d.n);
  b.t0 = d.t.getTime();
  b.q = d.q;
  b.strings = d.s;
  for (let i = 0; i < d.n; i++) b.at[i] = b.t0 + (d.dt[i] as number);
  b.key.set(d.k);
  b.tier.set(d.tr);
  b.route.set(d.r);
  b.slug.set(d.sl);
  b.variant.set(d.v);
  b.format.set(d.f);
  b.bucket.set(d.b);
  b.status.set(d.st);
  b.lat.set(d.l);
  if (d.c) b.count = Uint32Array.from(d.c);
  if (d.x) {
    b.miss = new Array(d.n).fill(null);
    for (let i = 0; i < d.x.length; ) {
      const pos = d.x[i++] as number;
      const m: number[] = [];
      while (i < d.x.length && d.x[i] !== -1) m.push(d.x[i++] as number);
      i++;
      b.miss[pos] = m;
    }
  }
  if (d.ids) b.ids = d.ids;
  return b;
}

/** The write errors of a bulk write error (the driver gives one or a list). */
function writeErrorsOf(err: MongoBulkWriteError): WriteError[] {
  const w = err.writeErrors as WriteError | WriteError[] | undefined;
  return w ? (Array.isArray(w) ? w : [w]) : [];
}

/**
 * Insert documents, unordered; the indexes of those whose `_id` was there already (any other
 * error is thrown).
 */
async function insertNew<T extends { _id: string }>(
  col: Collection<T>,
  docs: T[],
): Promise<Set<number>> {
  if (docs.length === 0) return new Set();
  try {
    await col.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: false });
    return new Set();
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const errors = writeErrorsOf(err);
    if (errors.length === 0 || errors.some((w) => w.code !== DUPLICATE_KEY)) throw err;
    return new Set(errors.map((w) => w.index));
  }
}

const periodId = (a: string, g: "d" | "h", p: string) => `${a}|${g}|${p}`;
const hourName = (h: number) => new Date(h * 3_600_000).toISOString().slice(0, 13);

export interface MongoLogOptions {
  /** ms between the projector's looks (0: only on append and settled; tests) */
  projectEveryMs?: number;
  /** ms a lease lasts unless renewed */
  leaseMs?: number;
  /** USAGE_HOURLY_DAYS */
  hourlyDays?: number;
  /** the clock (tests) */
  now?: () => number;
}

export class MongoUsageLog implements UsageLog {
  private readonly owner = new ObjectId().toHexString();
  private readonly leaseMs: number;
  readonly hourlyDays: number;
  private readonly now: () => number;
  /** this process holds the lease until (epoch ms; 0: not held) */
  private heldUntil = 0;
  private renewing: ReturnType<typeof setInterval> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** the projection under way (one at a time in this process) */
  private projecting: Promise<number> | null = null;
  /** pending batches, as the last look found them */
  private pending = 0;
  /** the last projection, as the lease's holder, counted every stored batch pending then */
  private drained = false;
  /** a rebuild or migration holds the projector */
  private paused = false;
  private closed = false;

  constructor(
    private db: Db,
    opts: MongoLogOptions = {},
  ) {
    this.leaseMs = opts.leaseMs ?? LEASE_MS;
    this.hourlyDays = opts.hourlyDays ?? 90;
    this.now = opts.now ?? Date.now;
    const every = opts.projectEveryMs ?? PROJECT_EVERY_MS;
    if (every > 0) {
      this.timer = setInterval(
        () => void this.project().catch((err) => this.projectionFailed(err)),
        every,
      );
      this.timer.unref?.();
    }
  }

  private get logs(): Collection<LogDoc> {
    return this.db.collection<LogDoc>("usage_log");
  }
  private get periodDocs(): Collection<PeriodDoc> {
    return this.db.collection<PeriodDoc>("usage_periods");
  }
  private get pendingDocs(): Collection<StateDoc> {
    return this.db.collection<StateDoc>("usage_pending");
  }
  private get countedDocs(): Collection<StateDoc> {
    return this.db.collection<StateDoc>("usage_counted");
  }
  private get missDocs(): Collection<MissDoc> {
    return this.db.collection<MissDoc>("usage_misses");
  }
  private get projector(): Collection<Lease | GroupDoc> {
    return this.db.collection<Lease | GroupDoc>("usage_projector");
  }
  private get kept(): Collection<
    { _id: string; a: string; day: string; bucket: string } & Record<string, unknown>
  > {
    return this.db.collection("usage_daily_kept");
  }

  /**
   * The indexes (docs/mongodb.md): `usage_log` by `t` (a TTL index of USAGE_RETENTION_DAYS + 1
   * days where the server has TTL indexes; retention's prune removes old batches on every
   * server), its `_id` for the rest; `usage_pending` and `usage_counted` by `t` (retention);
   * `usage_periods` by account, kind and period, and by period; `usage_misses` by account and
   * day, and by day.
   */
  static async ensureIndexes(db: Db, opts: { retentionDays?: number } = {}) {
    const { ensureIndexes } = await import("../../store/mongo/indexes");
    await ensureIndexes(db, "usage_pending", [{ key: { t: 1 }, name: "t" }]);
    await ensureIndexes(db, "usage_counted", [{ key: { t: 1 }, name: "t" }]);
    const expireAfterSeconds =
      opts.retentionDays === undefined ? undefined : (opts.retentionDays + 1) * 86_400;
    const have = (await db
      .collection("usage_log")
      .indexes()
      .catch(() => [])) as {
      name?: string;
      expireAfterSeconds?: number;
    }[];
    const t = have.find((i) => i.name === "t");
    if (!t) {
      try {
        await db
          .collection("usage_log")
          .createIndex(
            { t: 1 },
            { name: "t", ...(expireAfterSeconds ? { expireAfterSeconds } : {}) },
          );
      } catch (err) {
        // a server without TTL indexes: retention's prune does the work alone
        log("info", "usage_log: no TTL index on this server; retention prunes old batches", {
          reason: (err as Error).message,
        });
        await db.collection("usage_log").createIndex({ t: 1 }, { name: "t" });
      }
    } else if (
      expireAfterSeconds &&
      t.expireAfterSeconds !== undefined &&
      t.expireAfterSeconds !== expireAfterSeconds
    )
      await db.command({ collMod: "usage_log", index: { name: "t", expireAfterSeconds } });
    await ensureIndexes(db, "usage_periods", [
      { key: { a: 1, g: 1, p: 1 }, name: "a_g_p" },
      { key: { g: 1, p: 1 }, name: "g_p" },
    ]);
    await ensureIndexes(db, "usage_misses", [
      { key: { a: 1, day: 1 }, name: "a_day" },
      { key: { day: 1 }, name: "day" },
    ]);
    await ensureIndexes(db, "usage_daily_kept", [{ key: { a: 1, day: 1 }, name: "a_day" }]);
  }

  // ---- the log ----

  /**
   * Insert the batches, unordered, each after its pending document: a batch whose `_id` is there
   * already is read back: the same batch (a retry) is not stored again (and, counted already,
   * not counted again); another one that happens to have its id is stored under the next number.
   * Then, when this instance projects, its batches are counted.
   */
  async append(batches: Batch[]): Promise<number> {
    let stored = 0;
    let todo = batches.filter((b) => b.n > 0);
    for (let round = 0; todo.length > 0; round++) {
      if (round > 16) throw new Error("usage batch ids taken 16 times over");
      const w = new Date();
      await insertNew(
        this.pendingDocs,
        todo.map((b) => ({ _id: batchId(b.account, b.t0, b.q), t: new Date(b.t0), w })),
      );
      const dup = await insertNew(this.logs, todo.map(docOfBatch));
      const again: Batch[] = [];
      const taken = todo.filter((_, i) => dup.has(i));
      todo.forEach((b, i) => {
        if (!dup.has(i)) stored += b.n;
      });
      if (taken.length > 0) {
        const had = new Map(
          (
            await this.logs
              .find({ _id: { $in: taken.map((b) => batchId(b.account, b.t0, b.q)) } })
              .toArray()
          ).map((d) => [d._id, batchOfDoc(d)]),
        );
        for (const b of taken) {
          const h = had.get(batchId(b.account, b.t0, b.q));
          if (h && sameBatch(h, b)) continue;
          b.q = nextQ(b);
          again.push(b);
        }
      }
      todo = again;
    }
    // counted by the projector: this instance's at once when it holds the lease
    if (stored > 0) void this.project().catch((err) => this.projectionFailed(err));
    return stored;
  }

  private failedAt = 0;
  /** A projection that failed is tried again by the next look; logged at most once a minute. */
  private projectionFailed(err: unknown) {
    if (this.closed || Date.now() - this.failedAt < 60_000) return;
    this.failedAt = Date.now();
    log("warn", "usage projection failed; retried", { error: (err as Error).message });
  }

  /** Whether this process holds the projector's lease now (taken when free or run out). */
  private async holds_lease(): Promise<boolean> {
    if (this.closed) return false;
    if (this.heldUntil > Date.now() + this.leaseMs / 3) return true;
    return this.takeLease();
  }

  /** Leases run on the system clock (not the `now` option, which places hourly cells). */
  private async takeLease(): Promise<boolean> {
    const until = Date.now() + this.leaseMs;
    // renew our own
    const r = await this.projector.updateOne(
      { _id: "lease", owner: this.owner } as Filter<Lease | GroupDoc>,
      {
        $set: { until },
      },
    );
    if (r.matchedCount === 1) {
      this.heldUntil = until;
      return true;
    }
    try {
      await this.projector.insertOne({ _id: "lease", owner: this.owner, until } as Lease);
      this.heldUntil = until;
      this.startRenewing();
      return true;
    } catch (err) {
      if ((err as { code?: number }).code !== DUPLICATE_KEY) throw err;
    }
    const held = (await this.projector.findOne({ _id: "lease" })) as Lease | null;
    // a holder that died: its lease is removed once it ran out (the next look takes it)
    if (held && held.until < Date.now())
      await this.projector.deleteOne({
        _id: "lease",
        owner: held.owner,
        until: held.until,
      } as Filter<Lease | GroupDoc>);
    this.heldUntil = 0;
    return false;
  }

  private startRenewing() {
    if (this.renewing) return;
    this.renewing = setInterval(() => {
      if (this.closed || this.heldUntil === 0) return;
      void this.takeLease().catch(() => {
        this.heldUntil = 0;
      });
    }, this.leaseMs / 3);
    this.renewing.unref?.();
  }

  /**
   * Count batches into the projections, when this process holds the lease: first a group a
   * holder left under way, then groups of marked batches until none is left. Resolves to the
   * batches counted. One projection at a time in this process.
   */
  project(): Promise<number> {
    if (this.projecting) return this.projecting;
    this.projecting = this.projectNow().finally(() => {
      this.projecting = null;
    });
    return this.projecting;
  }

  private async projectNow(): Promise<number> {
    this.drained = false;
    if (this.paused || !(await this.holds_lease())) return 0;
    let counted = 0;
    const left = (await this.projector.findOne({ _id: "group" })) as GroupDoc | null;
    if (left) {
      const docs = await this.logs.find({ _id: { $in: left.ids } }).toArray();
      await this.applyGroup(docs.map(batchOfDoc), left.g);
      await this.finishGroup(docs);
      counted += docs.length;
      log("warn", "usage projection: a group left under way counted", { batches: docs.length });
    }
    for (;;) {
      if (this.closed || this.paused || this.heldUntil <= Date.now()) break;
      const pending = await this.pendingDocs
        .find({})
        .sort({ _id: 1 })
        .limit(GROUP_BATCHES)
        .toArray();
      // a full group: how many wait in all, for /readyz
      this.pending =
        pending.length < GROUP_BATCHES ? pending.length : await this.pendingDocs.countDocuments();
      const docs = await this.countableOf(pending);
      if (docs.length === 0) {
        this.drained = true;
        break;
      }
      const g = new ObjectId().toHexString();
      const ids = docs.map((d) => d._id);
      await this.projector.replaceOne({ _id: "group" }, { _id: "group", g, ids } as GroupDoc, {
        upsert: true,
      });
      await this.applyGroup(docs.map(batchOfDoc), g);
      await this.finishGroup(docs);
      counted += docs.length;
      if (pending.length < GROUP_BATCHES) {
        this.drained = true;
        break;
      }
    }
    return counted;
  }

  /**
   * The log documents of pending batches still to count: a batch counted already (appended
   * again) has its pending document dropped; one not in the log yet waits (its append is under
   * way), unless its pending document is older than ORPHAN_MS (dropped).
   */
  private async countableOf(pending: StateDoc[]): Promise<LogDoc[]> {
    if (pending.length === 0) return [];
    const ids = pending.map((p) => p._id);
    const counted = new Set(
      (
        await this.countedDocs.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()
      ).map((d) => d._id),
    );
    const docs = await this.logs
      .find({ _id: { $in: ids.filter((id) => !counted.has(id)) } })
      .sort({ _id: 1 })
      .toArray();
    const stored = new Set(docs.map((d) => d._id));
    const old = Date.now() - ORPHAN_MS;
    const drop = pending
      .filter((p) => counted.has(p._id) || (!stored.has(p._id) && (p.w?.getTime() ?? 0) < old))
      .map((p) => p._id);
    if (drop.length > 0) await this.pendingDocs.deleteMany({ _id: { $in: drop } });
    return docs;
  }

  /** A group counted: its batches recorded as counted, their pending documents dropped, the group cleared. */
  private async finishGroup(docs: LogDoc[]) {
    if (docs.length > 0) {
      await insertNew(
        this.countedDocs,
        docs.map((d) => ({ _id: d._id, t: d.t })),
      );
      await this.pendingDocs.deleteMany({ _id: { $in: docs.map((d) => d._id) } });
    }
    await this.projector.deleteOne({ _id: "group" });
  }

  /**
   * Count batches into their period and miss documents as group `g`: each document read first;
   * one that holds `g` already is left out; the others are written whole (their cells with the
   * group's added) with `g` as their marker, on the condition that their marker is still the
   * one read (so a document is never counted twice, even by a projector that lost its lease and
   * did not know yet).
   */
  private async applyGroup(batches: Batch[], g: string) {
    if (batches.length === 0) return;
    const firstHour = firstHourKept(this.hourlyDays, this.now());
    // the period documents the group touches
    const ids = new Set<string>();
    for (const b of batches) {
      ids.add(periodId(b.account, "d", utcDay(b.t0)));
      for (let i = 0; i < b.n; i++) {
        const h = Math.floor((b.at[i] as number) / 3_600_000);
        if (h >= firstHour) ids.add(periodId(b.account, "h", hourName(h)));
      }
    }
    const had = new Map<string, PeriodDoc>();
    const list = [...ids];
    for (let i = 0; i < list.length; i += READ_DOCS)
      for (const d of await this.periodDocs
        .find({ _id: { $in: list.slice(i, i + READ_DOCS) } })
        .toArray())
        had.set(d._id, d);
    // each document's cells, the group's folded in (those that hold the group already: left out)
    const open = new Map<string, ReturnType<typeof cellsOfDoc>>();
    const skip = { cells: new PeriodCells(), strings: new DocStrings() };
    const of = (id: string) => {
      let c = open.get(id);
      if (!c) {
        const prev = had.get(id);
        c = prev?.m === g ? skip : cellsOfDoc(prev);
        open.set(id, c);
      }
      return c.cells;
    };
    for (const b of batches)
      foldBatch(b, {
        day: (d) => of(periodId(b.account, "d", utcDay(d * DAY_MS))),
        hour: (h) => (h < firstHour ? null : of(periodId(b.account, "h", hourName(h)))),
      });
    const ops: AnyBulkWriteOperation<PeriodDoc>[] = [];
    for (const [_id, c] of open) {
      if (c === skip) continue;
      const [a, kind, p] = splitPeriodId(_id);
      ops.push({
        updateOne: {
          filter: { _id, m: had.get(_id)?.m ?? null } as Filter<PeriodDoc>,
          update: { $set: { m: g, a, g: kind, p, ...periodFields(c.cells, c.strings) } },
          upsert: true,
        },
      });
    }
    await this.write(this.periodDocs, ops);
    // misses
    const misses = new Map<string, { a: string; day: string; miss: string; n: number }>();
    for (const b of batches) {
      const day = utcDay(b.t0);
      for (const [miss, n] of missesOfBatch(b)) {
        const _id = `${b.account}|${day}|${miss}`;
        const m = misses.get(_id);
        if (m) m.n += n;
        else misses.set(_id, { a: b.account, day, miss, n });
      }
    }
    if (misses.size > 0) {
      const mids = [...misses.keys()];
      const seen = new Map<string, unknown>();
      for (let i = 0; i < mids.length; i += 1000)
        for (const d of await this.missDocs
          .find({ _id: { $in: mids.slice(i, i + 1000) } }, { projection: { m: 1 } })
          .toArray())
          seen.set(d._id, d.m ?? null);
      const mops: AnyBulkWriteOperation<MissDoc>[] = [];
      for (const [_id, m] of misses) {
        const prev = seen.get(_id);
        if (prev === g) continue;
        mops.push({
          updateOne: {
            filter: { _id, m: prev ?? null } as Filter<MissDoc>,
            update: { $set: { m: g, a: m.a, day: m.day, miss: m.miss }, $inc: { n: m.n } },
            upsert: true,
          },
        });
      }
      await this.write(this.missDocs, mops);
    }
  }

  /**
   * Conditional upserts, UPDATES_PER_BULK per bulk write. A duplicate-key error is an upsert
   * whose condition did not hold: the document changed since it was read (another projector:
   * this one lost its lease). The group is then left for the lease's holder.
   */
  private async write<T extends { _id: string }>(
    col: Collection<T>,
    ops: AnyBulkWriteOperation<T>[],
  ) {
    for (let i = 0; i < ops.length; i += UPDATES_PER_BULK) {
      try {
        await col.bulkWrite(ops.slice(i, i + UPDATES_PER_BULK), { ordered: false });
      } catch (err) {
        if (
          err instanceof MongoBulkWriteError &&
          writeErrorsOf(err).every((w) => w.code === DUPLICATE_KEY)
        ) {
          this.heldUntil = 0;
          throw new Error("usage projection: a document changed under the projector (lease lost)");
        }
        throw err;
      }
    }
  }

  /** Resolves once every batch in the log is counted (by this instance or the lease's holder). */
  async settled(): Promise<void> {
    for (let wait = 5; ; wait = Math.min(200, wait * 2)) {
      // a projection that starts now (one under way may have looked before the last appends)
      if (this.projecting) await this.projecting.catch(() => 0);
      await this.project();
      // the holder counted what was pending; batches appended meanwhile are counted next
      if (this.drained) return;
      const pending = await this.pendingDocs
        .find({}, { projection: { _id: 1 } })
        .limit(READ_DOCS)
        .toArray();
      const ids = pending.map((d) => d._id);
      const counted = new Set(
        (
          await this.countedDocs.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()
        ).map((d) => d._id),
      );
      const left = await this.logs.countDocuments({
        _id: { $in: ids.filter((id) => !counted.has(id)) },
      });
      if (left === 0 && !(await this.projector.findOne({ _id: "group" }))) return;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  backlog(): StoreBacklog {
    return { pendingBatches: this.pending };
  }

  // ---- reads ----

  async daily(accountId: string, from: string, to: string): Promise<DailyRow[]> {
    const out: DailyRow[] = [];
    const kept = await this.kept.find({ a: accountId, day: { $gte: from, $lte: to } }).toArray();
    const overridden = new Set(kept.map((r) => r.day));
    for (const row of await this.cells(accountId, "day", "bs", from, to)) {
      if (!overridden.has(row.t)) out.push(...dailyRowsOf(accountId, row.t, row.cells));
    }
    for (const r of kept)
      out.push({
        accountId,
        day: r.day,
        bucket: r.bucket as Bucket,
        requests: (r.requests as number) ?? 0,
        errors: (r.errors as number) ?? 0,
        rateLimited: (r.rateLimited as number) ?? 0,
      });
    return out.sort(byDayAndBucket);
  }

  async cells(
    accountId: string,
    granularity: Granularity,
    rollup: Rollup,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<PeriodRow[]> {
    const g = granularity === "day" ? "d" : "h";
    const v = rollupNo(rollup);
    const brand =
      hint?.brand !== undefined && (rollup === "b" || rollup === "all") ? hint.brand : undefined;
    const keyAt = rollup === "k" ? 0 : rollup === "all" ? 2 : -1;
    const out: PeriodRow[] = [];
    const cursor = this.periodDocs
      .find({ a: accountId, g, p: { $gte: from, $lte: to } }, { projection: { m: 0 } })
      .sort({ p: 1 });
    for await (const d of cursor) {
      let cells = readDocCells(d, v, brand as string | null | typeof OTHER | undefined);
      if (hint?.key !== undefined && keyAt >= 0)
        cells = cells.filter((c) => c.f[keyAt] === hint.key);
      if (cells.length > 0) out.push({ t: d.p, cells });
    }
    return out;
  }

  async misses(accountId: string | null, from: string, to: string) {
    const match: Filter<MissDoc> = { day: { $gte: from, $lte: to } };
    if (accountId !== null) match.a = accountId;
    const out = new Map<string, number>();
    const rows = this.missDocs.aggregate<{ _id: string; n: number }>([
      { $match: match },
      { $group: { _id: "$miss", n: { $sum: "$n" } } },
    ]);
    for await (const r of rows) out.set(r._id, r.n);
    return out;
  }

  /** The account's batches from `start` (an `_id`) to `end` (excluded), in id order. */
  private range(account: string, start: string, end: string) {
    return this.logs
      .find({ a: account, _id: { $gte: start, $lt: end } })
      .sort({ _id: 1 })
      .batchSize(READ_DOCS);
  }

  async exportStream(accountId: string, q: ExportQuery): Promise<ExportStream> {
    const empty: ExportStream = { events: 0, last: null, next: async () => null, close() {} };
    if (q.limit <= 0) return empty;
    const lo = dayStart(q.from);
    const hi = dayStart(q.to) + DAY_MS;
    let start = batchId(accountId, lo, 0);
    const end = batchId(accountId, hi, 0);
    const after = q.after;
    if (after !== null) {
      const c = parseEventId(after);
      if (c) {
        const [row] = await this.logs
          .find(
            { a: accountId, _id: { $lte: batchId(accountId, c.t0, c.q), $gte: start } },
            { projection: { _id: 1 } },
          )
          .sort({ _id: -1 })
          .limit(1)
          .toArray();
        if (row) start = row._id;
        else if (c.t0 >= lo) start = batchId(accountId, c.t0, 0);
      }
    }
    const page: Batch[] = [];
    let events = 0;
    let last: string | null = null;
    const cursor = this.range(accountId, start, end);
    outer: for await (const d of cursor) {
      const b = batchOfDoc(d);
      if ((b.at[b.n - 1] as number) >= q.before) break;
      let kept = 0;
      for (let i = 0; i < b.n; i++) {
        const id = idOf(b, i);
        if (after !== null && id <= after) continue;
        events++;
        kept++;
        last = id;
        if (events >= q.limit) {
          page.push(b);
          break outer;
        }
      }
      if (kept > 0) page.push(b);
    }
    await cursor.close();
    if (events === 0) return empty;
    let i = 0;
    let left = events;
    return {
      events,
      last,
      async next() {
        if (left <= 0 || i >= page.length) return null;
        const lines: string[] = [];
        let count = 0;
        while (i < page.length && count < 1000 && left > 0) {
          const n = exportLines(page[i++] as Batch, after, left, lines);
          left -= n;
          count += n;
        }
        return new TextEncoder().encode(lines.join(""));
      },
      close() {
        left = 0;
        page.length = 0;
      },
    };
  }

  async *events(accountId: string, from: string, to: string): AsyncIterable<Batch> {
    const cursor = this.range(
      accountId,
      batchId(accountId, dayStart(from), 0),
      batchId(accountId, dayStart(to) + DAY_MS, 0),
    );
    for await (const d of cursor) yield batchOfDoc(d);
  }

  /**
   * The day's requests: its day documents (the batches this instance can count are counted
   * first), plus the day's batches stored but not counted into them yet (`uncountedOfDay`).
   */
  async *tallyOfDay(day: string): AsyncIterable<CountableEvent> {
    await this.project().catch((err) => this.projectionFailed(err));
    const k = rollupNo("k");
    /** each account's day document's marker: the group that last counted into it */
    const marks = new Map<string, string | null | undefined>();
    for await (const d of this.periodDocs.find({ g: "d", p: day })) {
      marks.set(d.a, d.m);
      for (const c of readDocCells(d, k))
        yield {
          day,
          accountId: d.a,
          keyId: c.f[0] as string,
          bucket: c.f[1] as Bucket,
          status: c.f[2] as number,
          events: c.n,
        };
    }
    yield* this.uncountedOfDay(day, marks);
  }

  /**
   * The day's batches stored but not counted yet (their projector died, or is behind), so that
   * a tally has them before they are counted. Read after the day's documents (`marks`): the
   * group under way, then the pending batches. A pending batch outside that group had reached
   * no document when they were read; one in it had reached its account's day document if that
   * document holds the group's marker.
   */
  private async *uncountedOfDay(
    day: string,
    marks: Map<string, string | null | undefined>,
  ): AsyncIterable<CountableEvent> {
    const group = (await this.projector.findOne({ _id: "group" })) as GroupDoc | null;
    const from = dayStart(day);
    const pending = await this.pendingDocs
      .find(
        { t: { $gte: new Date(from), $lt: new Date(from + DAY_MS) } },
        { projection: { _id: 1 } },
      )
      .toArray();
    const inGroup = new Set(group?.ids ?? []);
    for (let i = 0; i < pending.length; i += READ_DOCS) {
      const ids = pending.slice(i, i + READ_DOCS).map((p) => p._id);
      const counted = new Set(
        (
          await this.countedDocs.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()
        ).map((d) => d._id),
      );
      for await (const d of this.logs.find({ _id: { $in: ids.filter((id) => !counted.has(id)) } }))
        if (!(inGroup.has(d._id) && marks.get(d.a) === group?.g))
          yield* countablesOf(batchOfDoc(d), day);
    }
  }

  async holds(ids: readonly { account: string; t0: number; q: number }[]): Promise<boolean[]> {
    const list = ids.map((x) => batchId(x.account, x.t0, x.q));
    const have = new Set<string>();
    for (let i = 0; i < list.length; i += 1000)
      for (const d of await this.logs
        .find({ _id: { $in: list.slice(i, i + 1000) } }, { projection: { _id: 1 } })
        .toArray())
        have.add(d._id);
    return list.map((id) => have.has(id));
  }

  /**
   * Hold the projector's lease (waiting for it) and keep its group from running while `fn`
   * runs: a rebuild or a migration never races the projection.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    for (let wait = 50; !(await this.holds_lease()); wait = Math.min(2000, wait * 2))
      await new Promise((r) => setTimeout(r, wait));
    // the batches not counted yet are counted first
    await this.project();
    this.paused = true;
    try {
      if (this.projecting) await this.projecting;
      return await fn();
    } finally {
      this.paused = false;
    }
  }

  /**
   * Recompute the period and miss documents of every day still in the log, under the lease
   * (the projection waits): each account and day from its batches already counted (those still
   * pending are counted by the projector afterwards, on top), the brands each period keeps
   * staying; documents of days no longer in the log stay.
   */
  async rebuild(
    progress?: (p: { day: string; events: number }) => void,
  ): Promise<{ events: number; days: number }> {
    return this.exclusive(async () => {
      let events = 0;
      const days = new Set<number>();
      const firstHour = firstHourKept(this.hourlyDays, this.now());
      const accounts = await this.logs.distinct("a");
      for (const account of accounts) {
        const byDay = new Map<number, LogDoc[]>();
        for await (const d of this.range(
          account,
          batchId(account, 0, 0),
          batchId(account, 9e12, 0),
        )) {
          const day = dayNo(d.t.getTime());
          const list = byDay.get(day) ?? [];
          list.push(d);
          byDay.set(day, list);
        }
        for (const [day, docs] of byDay) {
          // a pending document is written before its batch: read after the batches, it names
          // every batch of these not counted yet
          const pending = new Set(
            (
              await this.pendingDocs
                .find({ _id: { $in: docs.map((d) => d._id) } }, { projection: { _id: 1 } })
                .toArray()
            ).map((d) => d._id),
          );
          const list = docs.filter((d) => !pending.has(d._id)).map(batchOfDoc);
          days.add(day);
          const g = new ObjectId().toHexString();
          const dayName = utcDay(day * DAY_MS);
          const ids = [periodId(account, "d", dayName)];
          for (let h = day * 24; h < day * 24 + 24; h++)
            if (h >= firstHour) ids.push(periodId(account, "h", hourName(h)));
          const had = new Map(
            (await this.periodDocs.find({ _id: { $in: ids } }).toArray()).map((d) => [d._id, d]),
          );
          const cells = new Map<string, ReturnType<typeof cellsOfDoc>>();
          const of = (id: string) => {
            let c = cells.get(id);
            if (!c) {
              // the brands the period keeps stay; its cells are counted again
              const kept = cellsOfDoc(had.get(id), -1);
              kept.cells.views = new PeriodCells().views;
              c = kept;
              cells.set(id, c);
            }
            return c.cells;
          };
          for (const b of list) {
            events += b.n;
            foldBatch(b, {
              day: () => of(ids[0] as string),
              hour: (h) => (h < firstHour ? null : of(periodId(account, "h", hourName(h)))),
            });
          }
          const ops: AnyBulkWriteOperation<PeriodDoc>[] = [];
          for (const _id of ids) {
            const c = cells.get(_id);
            if (!c) {
              ops.push({ deleteOne: { filter: { _id } } });
              continue;
            }
            const [a, kind, p] = splitPeriodId(_id);
            ops.push({
              replaceOne: {
                filter: { _id },
                replacement: { a, g: kind, p, m: g, ...periodFields(c.cells, c.strings) },
                upsert: true,
              },
            });
          }
          for (let i = 0; i < ops.length; i += UPDATES_PER_BULK)
            await this.periodDocs.bulkWrite(ops.slice(i, i + UPDATES_PER_BULK), { ordered: false });
          // the day's misses of the account, again
          await this.missDocs.deleteMany({ a: account, day: dayName });
          const misses = new Map<string, number>();
          for (const b of list)
            for (const [m, n] of missesOfBatch(b)) misses.set(m, (misses.get(m) ?? 0) + n);
          if (misses.size > 0)
            await this.missDocs.insertMany(
              [...misses].map(([miss, n]) => ({
                _id: `${account}|${dayName}|${miss}`,
                a: account,
                day: dayName,
                miss,
                n,
                m: g,
              })),
            );
          progress?.({ day: dayName, events });
        }
      }
      return { events, days: days.size };
    });
  }

  /**
   * Retention: batches of days before `beforeDay` (counted ones: pending ones are left for the
   * projector) with their state documents, and hourly documents before `beforeHour` deleted;
   * day documents and misses stay.
   */
  async prune(beforeDay: string, beforeHour?: string): Promise<{ days: number; events: number }> {
    const t = new Date(dayStart(beforeDay));
    const waiting = (
      await this.pendingDocs.find({ t: { $lt: t } }, { projection: { _id: 1 } }).toArray()
    ).map((d) => d._id);
    const old = { t: { $lt: t }, _id: { $nin: waiting } } as Filter<LogDoc>;
    let events = 0;
    const days = new Set<number>();
    for await (const d of this.logs.find(old, { projection: { t: 1, n: 1 } })) {
      events += d.n;
      days.add(dayNo(d.t.getTime()));
    }
    await this.logs.deleteMany(old);
    await this.countedDocs.deleteMany({ t: { $lt: t } });
    if (beforeHour !== undefined)
      await this.periodDocs.deleteMany({ g: "h", p: { $lt: beforeHour } });
    return { days: days.size, events };
  }

  async close() {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.renewing) clearInterval(this.renewing);
    this.timer = null;
    this.renewing = null;
    if (this.projecting) await this.projecting.catch(() => 0);
    // hand the lease back: another instance projects at once
    if (this.heldUntil > 0)
      await this.projector
        .deleteOne({ _id: "lease", owner: this.owner } as Filter<Lease | GroupDoc>)
        .catch(() => {});
    this.heldUntil = 0;
  }
}

/** A period document's id: account, kind, period. */
function splitPeriodId(id: string): [string, "d" | "h", string] {
  const i = id.lastIndexOf("|");
  const j = id.lastIndexOf("|", i - 1);
  return [id.slice(0, j), id.slice(j + 1, i) as "d" | "h", id.slice(i + 1)];
}

export { OTHER };
