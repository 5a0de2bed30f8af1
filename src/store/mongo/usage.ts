import { type AnyBulkWriteOperation, type Db, MongoBulkWriteError } from "mongodb";
import { newId } from "../../platform/ids";
import { log } from "../../platform/log";
import type { Bucket } from "../../quota/limits";
import {
  type CellHint,
  CellProjection,
  hintFilter,
  type PeriodCells,
  type PeriodRow,
  type View,
} from "../../usage/analytics/cells";
import type { DailyRow, ExportQuery, UsageEvent, UsageEventStore } from "../../usage/port";
import { DUPLICATE_KEY, isDuplicate } from "./errors";
import { ensureIndexes } from "./indexes";
import {
  addDaily,
  allWritten,
  asCells,
  CACHED_DOCS,
  type CellDoc,
  type CellGroupName,
  cellsCollection,
  type DocPlan,
  docId,
  docPeriod,
  type EventDoc,
  foldInto,
  GROUPS,
  type LegacyDailyDoc,
  type Manifest,
  type ManifestDoc,
  manifestCollection,
  manifestId,
  mergeStored,
  monthsOf,
  newVersion,
  OLD_UNIQUE_INDEX,
  packDoc,
  partOf,
  periodsOf,
  planAdd,
  READ_CACHE_CHARS,
  REBUILD_SLOT,
  type ReadContent,
  readBack,
  SLOT_LEASE_MS,
  SLOT_RENEW_MS,
  type SlotDoc,
  type Split,
  type StoredDoc,
  type StoredPeriod,
  splitDocs,
  unpackDoc,
  unpackText,
  versionedWrite,
  type Written,
} from "./usage-docs";

/**
 * MongoDB usage store.
 *  - `usage_events`: the append-only log. `_id` is the event id (UUIDv7), so the id is unique
 *    and a replayed event is a duplicate-key error that is ignored. Index `day` serves the
 *    per-day reads (counter rebuild).
 *  - `usage_daily` and `usage_view_*`: the projections, documents per account, month and
 *    writer slot (see CellDoc). A process writes only the documents of the slot it holds
 *    (`usage_writers`: "0", "1", ..., one per process running at once, taken over once its
 *    holder stopped or stopped renewing it), so no two processes ever write one document and
 *    none loses the other's counts where updates are not atomic (FerretDB v1 reads, then
 *    writes). A read sums every slot's documents of the months it needs, fetched by `_id`.
 */
export class MongoUsageStore implements UsageEventStore {
  /** this process, as holder of its writer slot */
  private readonly writer = newId();
  /** the slot this process writes (claimed on its first write) */
  private slot: Promise<string> | null = null;
  /** the slot was held before: its documents may exist without this process having made them */
  private inherited = false;
  private renewal: ReturnType<typeof setInterval> | null = null;
  /** this writer's documents (collection|_id → content and version), oldest first */
  private docs = new Map<string, { v: string; c: StoredDoc }>();
  /** collection|_id of every document this writer created */
  private created = new Set<string>();
  /** this writer's manifests (group|accountId → content and version) */
  private manifests = new Map<string, { v: string; m: Manifest }>();
  /** group|accountId of every manifest this writer created */
  private manifestMade = new Set<string>();
  /** documents read (collection|_id → version, content, size in JSON characters) */
  private readCache = new Map<string, { v: string; doc: ReadContent; chars: number }>();
  private readCacheChars = 0;

  constructor(private db: Db) {}

  private get events() {
    return this.db.collection<EventDoc>("usage_events");
  }
  private manifestCol(g: CellGroupName) {
    return this.db.collection<ManifestDoc>(manifestCollection(g));
  }
  private get writers() {
    return this.db.collection<SlotDoc>("usage_writers");
  }
  private cellsCol(g: CellGroupName) {
    return this.db.collection<CellDoc>(cellsCollection(g));
  }

  static async ensureIndexes(db: Db) {
    await ensureIndexes(db, "usage_events", [
      { key: { day: 1 }, name: "day" },
      { key: { accountId: 1, _id: 1 }, name: "account_id" },
    ]);
    // the operators' miss list reads every account's documents of a range of months
    await ensureIndexes(db, cellsCollection("miss"), [{ key: { p: 1 }, name: "p" }]);
    const daily = db.collection("usage_daily");
    const had = await daily.indexes().catch(() => [] as { name?: string }[]);
    if (had.some((i) => i.name === OLD_UNIQUE_INDEX)) await daily.dropIndex(OLD_UNIQUE_INDEX);
    await new MongoUsageStore(db).carryOver();
  }

  /**
   * At start: a database of an earlier layout (usage_daily rows per day, view documents per
   * third of a month) has its projection documents folded into the current layout, as a
   * rebuild does but without reading the log, by the one process that claims the job first.
   */
  private async carryOver() {
    const legacy =
      (await this.db.collection("usage_daily").findOne({ day: { $exists: true } })) ??
      (await this.cellsCol("miss").findOne({ p: { $regex: "^\\d{4}-\\d{2}-\\d$" } })) ??
      (await this.cellsCol("day.bs").findOne({ p: { $regex: "^\\d{4}-\\d{2}-\\d$" } }));
    if (!legacy) return;
    try {
      await this.db
        .collection<{ _id: string }>("usage_writer_claims")
        .insertOne({ _id: "layout-months" });
    } catch (err) {
      if (isDuplicate(err)) return; // another process does it
      throw err;
    }
    log("info", "usage projections: carrying documents of an earlier layout over");
    await this.rebuildDocs(new CellProjection(), new Map(), null);
  }

  /** The writer slot of this process: claimed once, then renewed in the background. */
  private writerSlot(): Promise<string> {
    this.slot ??= this.claimSlot().catch((err) => {
      this.slot = null;
      throw err;
    });
    return this.slot;
  }

  /**
   * Take the lowest slot that is free: never used (an insert, which one process wins), or
   * not renewed in time (a takeover: the insert of a claim named after the slot's last holder,
   * which one process wins, then the slot is rewritten).
   */
  private async claimSlot(): Promise<string> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const slots = await this.writers.find({}).toArray();
      const now = Date.now();
      const held = new Map(slots.map((s) => [s._id, s]));
      let n = 0;
      while (held.has(String(n)) && (held.get(String(n)) as SlotDoc).until > now) n++;
      const _id = String(n);
      const was = held.get(_id);
      const mine: SlotDoc = { _id, w: this.writer, until: now + SLOT_LEASE_MS };
      try {
        if (!was) await this.writers.insertOne(mine);
        else {
          await this.db
            .collection<{ _id: string }>("usage_writer_claims")
            .insertOne({ _id: `${_id}|${was.w}` });
          await this.writers.replaceOne({ _id }, mine);
        }
      } catch (err) {
        if (isDuplicate(err)) continue; // another process was first: look again
        throw err;
      }
      this.inherited = was !== undefined;
      this.renewal = setInterval(() => void this.renewSlot(_id), SLOT_RENEW_MS);
      this.renewal.unref?.();
      return _id;
    }
    throw new Error("no usage writer slot could be claimed");
  }

  /** Extend the hold; a slot found taken over (this process stalled) is given up for a new one. */
  private async renewSlot(_id: string) {
    try {
      const r = await this.writers.updateOne(
        { _id, w: this.writer },
        { $set: { until: Date.now() + SLOT_LEASE_MS } },
      );
      if (r.matchedCount === 0) this.dropSlot();
    } catch (err) {
      log("warn", "usage writer slot not renewed", { error: (err as Error).message });
    }
  }

  private dropSlot() {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = null;
    this.slot = null;
    this.docs.clear();
    this.created.clear();
    this.manifests.clear();
    this.manifestMade.clear();
  }

  /** Every writer slot that may hold documents (held or not), and the rebuild's. */
  private async slotIds(): Promise<string[]> {
    const slots = await this.writers.find({}, { projection: { _id: 1 } }).toArray();
    return [...slots.map((s) => s._id), REBUILD_SLOT];
  }

  async append(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    let inserted: UsageEvent[] = events;
    let failure: unknown = null;
    try {
      await this.events.insertMany(
        events.map((e) => ({ _id: e.id, ...e })),
        { ordered: false },
      );
    } catch (err) {
      // anything but a bulk write error: nothing is known to be written, the caller retries
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const writeErrors = err.writeErrors
        ? Array.isArray(err.writeErrors)
          ? err.writeErrors
          : [err.writeErrors]
        : [];
      const failed = new Set(writeErrors.map((w) => w.index));
      inserted = events.filter((_, i) => !failed.has(i));
      // duplicates (already stored) are success; any other failure is retried by the caller,
      // and the retry sees the events inserted now as duplicates
      if (writeErrors.some((w) => w.code !== DUPLICATE_KEY) || err.err) failure = err;
    }
    await this.project(inserted);
    if (failure) throw failure;
    return inserted.length;
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyRow[]> {
    // one row per day and bucket: the sum of every slot's counts
    const sums = new Map<string, DailyRow>();
    for (const [day, buckets] of await this.readDocs("daily", accountId, from, to))
      for (const [bucket, c] of Object.entries(buckets as StoredPeriod)) {
        const k = `${day}|${bucket}`;
        const row = sums.get(k);
        if (row) {
          row.requests += c[0] as number;
          row.errors += c[1] as number;
          row.rateLimited += c[2] as number;
        } else
          sums.set(k, {
            accountId,
            day,
            bucket: bucket as Bucket,
            requests: c[0] as number,
            errors: c[1] as number,
            rateLimited: c[2] as number,
          });
      }
    return [...sums.values()].sort((a, b) =>
      a.day !== b.day ? (a.day < b.day ? -1 : 1) : a.bucket < b.bucket ? -1 : 1,
    );
  }

  async cells(
    accountId: string,
    view: View,
    from: string,
    to: string,
    hint?: CellHint,
  ): Promise<PeriodRow[]> {
    // a brand= or key= read of the `all` rollup makes cells of that brand or key only
    const keep = view.endsWith(".all") ? hintFilter(hint) : null;
    const split: Split | null =
      !keep || view !== "day.all" ? null : hint?.brand !== undefined ? "b" : "k";
    const docs = this.readDocs(
      view,
      accountId,
      from,
      to,
      split
        ? {
            split,
            part: partOf(split, split === "b" ? (hint?.brand ?? null) : (hint?.key ?? "")),
          }
        : undefined,
    );
    const rows: PeriodRow[] = [];
    for (const [t, value] of await docs) {
      const all = value as PeriodCells;
      if (!keep) rows.push({ t, cells: all });
      else {
        const cells: PeriodCells = new Map();
        all.forEach((c, k) => {
          if (keep(k)) cells.set(k, c);
        });
        rows.push({ t, cells });
      }
    }
    return rows;
  }

  async misses(accountId: string | null, from: string, to: string) {
    const out = new Map<string, number>();
    for (const [, misses] of await this.readDocs("miss", accountId, from, to))
      for (const [miss, n] of Object.entries(misses as Record<string, number>))
        out.set(miss, (out.get(miss) ?? 0) + n);
    return out;
  }

  /**
   * The stored periods from..to of one group of an account, one entry per slot's document and
   * period: each document fetched by `_id` (months x writer slots). Of every account (null:
   * the operators' miss list): a filter on the month.
   */
  private async readDocs(
    g: CellGroupName,
    accountId: string | null,
    from: string,
    to: string,
    /** day.all: the split part to read where the month was split */
    only?: { split: Split; part: number },
  ) {
    const col = this.cellsCol(g);
    let docs: CellDoc[] = [];
    if (accountId === null)
      docs = await col
        .find({ p: { $gte: docPeriod(from), $lte: docPeriod(to) } }, { projection: { c: 1 } })
        .toArray();
    else {
      const months = monthsOf(from, to);
      const slots = await this.slotIds();
      const manifests = await Promise.all(
        slots.map((slot) => this.manifestCol(g).findOne({ _id: manifestId(accountId, slot) })),
      );
      const wanted: { g: CellGroupName; _id: string; v: string }[] = [];
      for (const man of manifests) {
        if (!man) continue;
        const versions = JSON.parse(man.m) as Manifest;
        for (const m of months) {
          if (only && versions[`${m}|${only.split}`]) {
            // a split month: its part, when that has cells
            const v = versions[`${m}|${only.split}${only.part}`];
            if (v)
              wanted.push({
                g: `day.all.${only.split}`,
                _id: docId(accountId, m, man.w, only.part),
                v,
              });
          } else if (versions[m])
            wanted.push({ g, _id: docId(accountId, m, man.w), v: versions[m] });
        }
      }
      const contents = await Promise.all(wanted.map((w) => this.readDoc(w.g, w._id, w.v)));
      return periodsOf(contents, from, to);
    }
    return periodsOf(
      docs.map((d) => unpackDoc(d.c)),
      from,
      to,
    );
  }

  /**
   * One document's content, from the read cache when it holds version `v`, else fetched: a
   * view's periods as cells (shared by every read: callers do not change them), misses and
   * daily counts as stored.
   */
  private async readDoc(g: CellGroupName, _id: string, v: string): Promise<ReadContent | null> {
    const at = `${g}|${_id}`;
    const had = this.readCache.get(at);
    if (had && had.v === v) {
      this.readCache.delete(at);
      this.readCache.set(at, had);
      return had.doc;
    }
    const d = await this.cellsCol(g).findOne({ _id }, { projection: { c: 1, v: 1 } });
    if (!d?.c) return null;
    const text = unpackText(d.c);
    const stored = JSON.parse(text) as StoredDoc;
    const doc: ReadContent =
      g === "miss" || g === "daily" ? stored : asCells(stored as Record<string, StoredPeriod>);
    if (had) {
      this.readCache.delete(at);
      this.readCacheChars -= had.chars;
    }
    this.readCache.set(at, { v: d.v, doc, chars: text.length });
    this.readCacheChars += text.length;
    for (const [k, old] of this.readCache) {
      if (this.readCacheChars <= READ_CACHE_CHARS) break;
      this.readCache.delete(k);
      this.readCacheChars -= old.chars;
    }
    return doc;
  }

  async exportEvents(accountId: string, q: ExportQuery): Promise<UsageEvent[]> {
    const docs = await this.events
      .find(
        {
          accountId,
          ...(q.after === null ? {} : { _id: { $gt: q.after } }),
          day: { $gte: q.from, $lte: q.to },
          ts: { $lt: q.before },
        },
        { projection: { _id: 0 } },
      )
      .sort({ _id: 1 })
      .limit(q.limit)
      .toArray();
    return docs as UsageEvent[];
  }

  async *eventsOfDay(day: string): AsyncIterable<UsageEvent> {
    // unsorted: the port asks for each event once, in no order (a sort of a busy day would
    // have to happen in memory)
    const cursor = this.events.find({ day }, { projection: { _id: 0 } }).batchSize(5000);
    for await (const doc of cursor) yield doc as UsageEvent;
  }

  /** Delete raw events of days before `beforeDay` (retention); their usage_daily counts stay. */
  async prune(beforeDay: string) {
    // usage_daily is maintained per batch, so it already holds these days: only the raw
    // events go
    const days = await this.events.distinct("day", { day: { $lt: beforeDay } });
    const r = await this.events.deleteMany({ day: { $lt: beforeDay } });
    return { days: days.length, events: r.deletedCount };
  }

  /**
   * Recompute usage_daily and the analytics cells and misses from usage_events: the events are
   * streamed and counted here (the common subset of MongoDB and FerretDB has no `$cond` in
   * `$group`, nor `$out`), then every projection document is replaced (see rebuildDocs).
   */
  async rebuildDaily(progress?: (p: { day: string; events: number }) => void) {
    const cells = new CellProjection();
    const daily = new Map<string, Map<string, StoredPeriod>>();
    let rows = 0;
    let events = 0;
    let oldest: string | null = null;
    const cursor = this.events.find({}, { projection: { _id: 0 } }).batchSize(5000);
    for await (const e of cursor) {
      events++;
      cells.add(e);
      if (progress && events % 100_000 === 0) progress({ day: e.day, events });
      if (oldest === null || e.day < oldest) oldest = e.day;
      if (addDaily(daily, e)) rows++;
    }
    await this.rebuildDocs(cells, daily, oldest);
    if (progress && events % 100_000 !== 0) progress({ day: oldest ?? "", events });
    return { events, rows };
  }

  /** Give up this process's writer slot (another process may take it at once). */
  async close() {
    const slot = this.slot;
    this.dropSlot();
    if (!slot) return;
    const _id = await slot.catch(() => null);
    if (_id !== null)
      await this.writers.updateOne({ _id, w: this.writer }, { $set: { until: 0 } }).catch(() => {});
  }

  /**
   * Replace the projection documents with the rebuilt ones: every document of every group is
   * read, its periods from `oldest` on (the days still in the log) dropped and the rest (pruned
   * days, whose counts only the projection keeps) folded with the rebuilt counts into the
   * documents of the rebuild's slot; every other document is deleted. So after a rebuild an
   * account has one document per group and month, and documents of earlier layouts (other
   * periods or `_id`s, usage_daily rows per day) are carried over.
   */
  private async rebuildDocs(
    cells: CellProjection,
    daily: Map<string, Map<string, StoredPeriod>>,
    oldestInLog: string | null,
  ) {
    // an empty log: every stored period is of a pruned day
    const oldest = oldestInLog ?? "9999";
    this.docs.clear();
    this.created.clear();
    this.manifests.clear();
    this.manifestMade.clear();
    const built = new Map<CellGroupName, Map<string, DocPlan>>(GROUPS.map((g) => [g, new Map()]));
    foldInto(
      (g, accountId, t, add) =>
        planAdd(built.get(g) as Map<string, DocPlan>, accountId, t, REBUILD_SLOT, add),
      cells,
      daily,
    );
    for (const g of GROUPS) {
      const plans = built.get(g) as Map<string, DocPlan>;
      const col = this.cellsCol(g);
      const existing = new Set<string>();
      for await (const d of col.find({})) {
        existing.add(d._id);
        const legacy = d as unknown as Partial<LegacyDailyDoc>;
        if (g === "daily" && typeof legacy.day === "string") {
          // a usage_daily row of an earlier version
          if (legacy.day < oldest)
            planAdd(plans, d.accountId, legacy.day, REBUILD_SLOT, {
              [legacy.bucket as string]: [
                legacy.requests ?? 0,
                legacy.errors ?? 0,
                legacy.rateLimited ?? 0,
              ],
            });
          continue;
        }
        if (d.c === undefined) continue;
        const doc = unpackDoc(d.c);
        for (const t in doc)
          if (t < oldest) planAdd(plans, d.accountId, t, REBUILD_SLOT, doc[t] as StoredDoc[string]);
      }
      const ops: AnyBulkWriteOperation<CellDoc>[] = [];
      const put = (doc: CellDoc) =>
        ops.push(
          existing.delete(doc._id)
            ? { replaceOne: { filter: { _id: doc._id }, replacement: doc } }
            : { insertOne: { document: doc } },
        );
      // the rebuild slot's manifests list every document
      const manifests = new Map<string, Manifest>();
      const splitOut: Record<Split, CellDoc[]> = { b: [], k: [] };
      for (const [_id, plan] of plans) {
        const v = newVersion();
        put({
          _id,
          accountId: plan.accountId,
          p: plan.p,
          w: REBUILD_SLOT,
          v,
          c: packDoc(plan.add),
        });
        const m = manifests.get(plan.accountId) ?? {};
        manifests.set(plan.accountId, m);
        m[plan.p] = v;
        if (g === "day.all") {
          const split = splitDocs(plan.accountId, plan.p, REBUILD_SLOT, plan.add);
          for (const { split: name, doc } of split.docs) splitOut[name].push(doc);
          for (const [key, sv] of split.keys) m[key] = sv;
        }
      }
      if (g === "day.all") await this.replaceSplits(splitOut);
      // every other document goes
      const stale = [...existing];
      for (let i = 0; i < ops.length; i += 500)
        await col.bulkWrite(ops.slice(i, i + 500), { ordered: false });
      for (let i = 0; i < stale.length; i += 1000)
        await col.deleteMany({ _id: { $in: stale.slice(i, i + 1000) } });
      await this.replaceManifests(g, manifests);
    }
  }

  /** A rebuild's manifests of group `g` (of its slot): every other manifest goes. */
  private async replaceManifests(g: CellGroupName, manifests: Map<string, Manifest>) {
    const col = this.manifestCol(g);
    const existing = new Set(
      (await col.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id),
    );
    const ops: AnyBulkWriteOperation<ManifestDoc>[] = [...manifests].map(([accountId, m]) => {
      const doc: ManifestDoc = {
        _id: manifestId(accountId, REBUILD_SLOT),
        accountId,
        w: REBUILD_SLOT,
        v: newVersion(),
        m: JSON.stringify(m),
      };
      return existing.delete(doc._id)
        ? { replaceOne: { filter: { _id: doc._id }, replacement: doc } }
        : { insertOne: { document: doc } };
    });
    for (let i = 0; i < ops.length; i += 500)
      await col.bulkWrite(ops.slice(i, i + 500), { ordered: false });
    const stale = [...existing];
    for (let i = 0; i < stale.length; i += 1000)
      await col.deleteMany({ _id: { $in: stale.slice(i, i + 1000) } });
  }

  /** A rebuild's split `day.all` documents: every other one of the split collections goes. */
  private async replaceSplits(docs: Record<Split, CellDoc[]>) {
    for (const split of ["b", "k"] as const) {
      const col = this.cellsCol(`day.all.${split}`);
      const existing = new Set(
        (await col.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id),
      );
      const ops: AnyBulkWriteOperation<CellDoc>[] = docs[split].map((doc) =>
        existing.delete(doc._id)
          ? { replaceOne: { filter: { _id: doc._id }, replacement: doc } }
          : { insertOne: { document: doc } },
      );
      for (let i = 0; i < ops.length; i += 500)
        await col.bulkWrite(ops.slice(i, i + 500), { ordered: false });
      const stale = [...existing];
      for (let i = 0; i < stale.length; i += 1000)
        await col.deleteMany({ _id: { $in: stale.slice(i, i + 1000) } });
    }
  }

  /**
   * Fold newly inserted events into the projections. The events are already safe in the log, so
   * a failure here is logged, not thrown (a retry would skip them as duplicates anyway); the
   * projections are then repaired with `npm run admin -- projections rebuild`.
   */
  private async project(events: UsageEvent[]) {
    if (events.length === 0) return;
    try {
      const slot = await this.writerSlot();
      const plans = new Map<CellGroupName, Map<string, DocPlan>>();
      const daily = new Map<string, Map<string, StoredPeriod>>();
      for (const e of events) addDaily(daily, e);
      const delta = new CellProjection();
      delta.addAll(events);
      foldInto(
        (g, accountId, t, add) => {
          let docs = plans.get(g);
          if (!docs) {
            docs = new Map();
            plans.set(g, docs);
          }
          planAdd(docs, accountId, t, slot, add);
        },
        delta,
        daily,
      );
      // one collection per group: their writes go in parallel, each group's documents, then
      // the manifests that list them
      await Promise.all(
        [...plans].map(async ([g, docs]) => {
          const list = [...docs];
          const written: Written[] = [];
          for (let i = 0; i < list.length; i += 500)
            written.push(...(await this.writeDocs(g, slot, list.slice(i, i + 500))));
          await this.writeManifests(g, slot, written);
        }),
      );
    } catch (err) {
      log("error", "usage projection update failed; run: npm run admin -- projections rebuild", {
        events: events.length,
        error: (err as Error).message,
      });
    }
  }

  /**
   * Fold additions into documents of this process's slot: each document's new content is its
   * cached one plus the additions, written whole. A document this writer never created is
   * inserted (read back first when the slot was held before); one it created but no longer
   * caches is read back first. A write that finds the document changed or gone (a rebuild ran
   * meanwhile) is redone from what is stored then.
   */
  private async writeDocs(
    g: CellGroupName,
    w: string,
    list: [string, DocPlan][],
  ): Promise<Written[]> {
    const col = this.cellsCol(g);
    const written = (): Written[] =>
      list.map(([_id, { accountId, p }]) => ({
        accountId,
        g,
        key: p,
        v: versions.get(_id) as string,
      }));
    const versions = new Map<string, string>();
    const ops: AnyBulkWriteOperation<CellDoc>[] = [];
    const done: [string, { v: string; c: StoredDoc }][] = [];
    // documents that may be stored but are not cached are read back, in one query
    const stored = await readBack(
      col,
      list
        .map(([_id]) => _id)
        .filter((_id) => {
          const at = `${g}|${_id}`;
          return !this.docs.has(at) && (this.created.has(at) || this.inherited);
        }),
    );
    for (const [_id, { accountId, p, add }] of list) {
      const at = `${g}|${_id}`;
      let had = this.docs.get(at);
      if (!had) {
        const d = stored.get(_id);
        had = d ? { v: d.v, c: unpackDoc(d.c) } : undefined;
      }
      // the cached content is updated in place: a failed write is redone from the stored one
      const c: StoredDoc = had ? had.c : {};
      mergeStored(c, add);
      const v = newVersion();
      const doc: CellDoc = { _id, accountId, p, w, v, c: packDoc(c) };
      ops.push(versionedWrite(doc, had?.v));
      done.push([at, { v, c }]);
      versions.set(_id, v);
    }
    const ok = await allWritten(col, ops);
    for (const [at, d] of done) {
      this.created.add(at);
      this.remember(at, d);
    }
    if (ok) return this.withSplits(g, w, list, written());
    // some document was changed or removed by someone else: redo each from what is stored
    for (const [_id, { accountId, p, add }] of list) {
      const at = `${g}|${_id}`;
      const mine = this.docs.get(at);
      const d = await col.findOne({ _id });
      if (d && mine && d.v === mine.v) continue; // this one was written
      const c: StoredDoc = d ? unpackDoc(d.c) : {};
      mergeStored(c, add);
      const v = newVersion();
      const doc: CellDoc = { _id, accountId, p, w, v, c: packDoc(c) };
      if (d) await col.replaceOne({ _id }, doc);
      else await col.insertOne(doc);
      this.remember(at, { v, c });
      versions.set(_id, v);
    }
    return this.withSplits(g, w, list, written());
  }

  /**
   * After `day.all` documents were written: their split documents, derived whole from their
   * content (see SPLITS), upserted (only this slot writes them), and listed with the rest.
   */
  private async withSplits(
    g: CellGroupName,
    w: string,
    list: [string, DocPlan][],
    written: Written[],
  ): Promise<Written[]> {
    if (g !== "day.all") return written;
    const ops: Record<Split, AnyBulkWriteOperation<CellDoc>[]> = { b: [], k: [] };
    for (const [_id, { accountId, p }] of list) {
      const content = this.docs.get(`${g}|${_id}`)?.c;
      if (!content) continue;
      const split = splitDocs(accountId, p, w, content);
      for (const { split: name, doc } of split.docs)
        ops[name].push({
          replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true },
        });
      for (const [key, v] of split.keys) written.push({ accountId, g, key, v });
    }
    await Promise.all(
      (["b", "k"] as const).map(async (name) => {
        for (let i = 0; i < ops[name].length; i += 500)
          await this.cellsCol(`day.all.${name}`).bulkWrite(ops[name].slice(i, i + 500), {
            ordered: false,
          });
      }),
    );
    return written;
  }

  /**
   * Record documents of group `g` just written in their accounts' manifests of slot `w` (each
   * rewritten whole, as the documents are; read back first when not cached and possibly
   * stored; redone from what is stored when changed or removed meanwhile, by a rebuild).
   */
  private async writeManifests(g: CellGroupName, w: string, written: Written[]) {
    const byAccount = new Map<string, Written[]>();
    for (const x of written) {
      const list = byAccount.get(x.accountId);
      if (list) list.push(x);
      else byAccount.set(x.accountId, [x]);
    }
    const col = this.manifestCol(g);
    const add = (m: Manifest, list: Written[]) => {
      for (const x of list) m[x.key] = x.v;
    };
    const ops: AnyBulkWriteOperation<ManifestDoc>[] = [];
    const entries = [...byAccount];
    const stored = await readBack(
      col,
      entries
        .filter(([accountId]) => {
          const at = `${g}|${accountId}`;
          return !this.manifests.has(at) && (this.manifestMade.has(at) || this.inherited);
        })
        .map(([accountId]) => manifestId(accountId, w)),
    );
    for (const [accountId, list] of entries) {
      const _id = manifestId(accountId, w);
      const at = `${g}|${accountId}`;
      let had = this.manifests.get(at);
      if (!had) {
        const d = stored.get(_id);
        had = d ? { v: d.v, m: JSON.parse(d.m) as Manifest } : undefined;
      }
      const m: Manifest = had ? had.m : {};
      add(m, list);
      const v = newVersion();
      const doc: ManifestDoc = { _id, accountId, w, v, m: JSON.stringify(m) };
      ops.push(versionedWrite(doc, had?.v));
      this.manifests.set(at, { v, m });
      this.manifestMade.add(at);
    }
    const ok = await allWritten(col, ops);
    if (ok) return;
    for (const [accountId, list] of entries) {
      const _id = manifestId(accountId, w);
      const at = `${g}|${accountId}`;
      const d = await col.findOne({ _id });
      if (d && d.v === this.manifests.get(at)?.v) continue;
      const m: Manifest = d ? (JSON.parse(d.m) as Manifest) : {};
      add(m, list);
      const v = newVersion();
      const doc: ManifestDoc = { _id, accountId, w, v, m: JSON.stringify(m) };
      if (d) await col.replaceOne({ _id }, doc);
      else await col.insertOne(doc);
      this.manifests.set(at, { v, m });
    }
  }

  /** keep a document of this writer in memory (the least recently written go first) */
  private remember(at: string, d: { v: string; c: StoredDoc }) {
    this.docs.delete(at);
    this.docs.set(at, d);
    if (this.docs.size > CACHED_DOCS) {
      const oldest = this.docs.keys().next().value;
      if (oldest !== undefined) this.docs.delete(oldest);
    }
  }
}
