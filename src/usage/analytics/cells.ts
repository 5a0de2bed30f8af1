import type { UsageEvent } from "../port";
import { cellMap, dayNumber, dayOfNumber, type Packed, Segments } from "./packed";

/**
 * The analytics projections, shared by both store adapters:
 *  - cells: per account, UTC day (and UTC hour), rollup (see ROLLUPS) and group of the rollup's
 *    fields (bucket, key, brand, variant, format, exact status), the counts (requests, errors,
 *    rateLimited: the usage_daily rules) and a fixed latency histogram;
 *  - misses: per account, UTC day and miss (`domain:acme.test`, `slug:acme`, ...), the count.
 * The embedded store keeps them as rows of usage_cells and usage_misses (SQLite); the MongoDB
 * store keeps one rollup document per cell (src/store/mongo/usage-rollups.ts).
 */

/** A projection cell: counts and a latency histogram (bin index → requests). */
export interface Cell {
  /** requests */
  n: number;
  /** errors: 4xx/5xx other than 429 */
  e: number;
  /** rateLimited: 429 */
  r: number;
  /**
   * latency histogram as pairs [bin, requests, bin, requests, ...] (bins: latencyBin), only bins
   * with requests: far quicker to walk than an object keyed by bin
   */
  h: number[];
}

export type Granularity = "day" | "hour";

/** The group fields of a cell, in the order of its key. */
export interface CellGroup {
  bucket: string;
  /** the API key id ("" for a bearer-token caller) */
  key: string;
  brand: string | null;
  variant: string | null;
  format: string | null;
  status: number;
}

/** Lower bound of latency bin 1, in ms; bin 0 holds everything faster. */
const LAT_BASE = 0.05;
/** Each bin is this factor wider than the one before (a quantile is within ~10% of the truth). */
const LAT_FACTOR = 1.2;
/** Bins in all: the last one holds everything from about 2.4 minutes on. */
export const LAT_BINS = 80;
const LOG_FACTOR = Math.log(LAT_FACTOR);

/** The histogram bin of a latency in ms. */
export function latencyBin(ms: number): number {
  if (!(ms >= LAT_BASE)) return 0;
  return Math.min(LAT_BINS - 1, Math.floor(Math.log(ms / LAT_BASE) / LOG_FACTOR) + 1);
}

/** The value a bin stands for: its geometric middle (ms, two decimals). */
export function binValue(bin: number): number {
  const v = bin === 0 ? LAT_BASE / 2 : LAT_BASE * LAT_FACTOR ** (bin - 0.5);
  return Math.round(v * 100) / 100;
}

export const emptyCell = (): Cell => ({ n: 0, e: 0, r: 0, h: [] });

/** Add `n` requests to one bin of a histogram (pairs). */
export function addToBin(h: number[], bin: number, n: number): void {
  for (let i = 0; i < h.length; i += 2)
    if (h[i] === bin) {
      h[i + 1] = (h[i + 1] as number) + n;
      return;
    }
  h.push(bin, n);
}

/** Count `n` requests of one status and latency bin into a cell (the usage_daily rules). */
export function countCell(c: Cell, status: number, bin: number, n: number): void {
  c.n += n;
  if (status === 429) c.r += n;
  else if (status >= 400) c.e += n;
  addToBin(c.h, bin, n);
}

const IMAGE_BUCKETS = new Set(["svg", "png", "webp"]);

/** The format of an event: recorded by the asset routes, else its image bucket (older events). */
export const formatOf = (e: Pick<UsageEvent, "format" | "bucket">): string | null =>
  typeof e.format === "string" ? e.format : IMAGE_BUCKETS.has(e.bucket) ? e.bucket : null;

/**
 * One part of a cell key: never containing the separator "|" (nor "." or a leading "$"). null
 * is "%" (a lone "%" is never an encoded value).
 */
const SAFE = /^[A-Za-z0-9_-]*$/;
const enc = (v: string | null): string =>
  v === null ? "%" : SAFE.test(v) ? v : encodeURIComponent(v).replace(/\./g, "%2E");
const dec = (s: string): string | null => (s === "%" ? null : decodeURIComponent(s));

/** A cell's group fields that a rollup keeps (missing ones are summed over). */
export type GroupField = keyof CellGroup;

/**
 * Rollups: each keeps cells of a few group fields only, so a query reads the smallest one that
 * has the fields it groups or filters by (`all`, every field, is the fallback). A year of one
 * account in `bs` is at most 366 x 7 buckets x its statuses cells, whatever its brands and keys.
 */
export const ROLLUPS = {
  bs: ["bucket", "status"],
  k: ["key", "bucket", "status"],
  b: ["brand", "status"],
  vf: ["variant", "format", "bucket", "status"],
  all: ["bucket", "key", "brand", "variant", "format", "status"],
} as const satisfies Record<string, readonly GroupField[]>;
export type Rollup = keyof typeof ROLLUPS;
export const ROLLUP_NAMES = Object.keys(ROLLUPS) as Rollup[];

/** A granularity and rollup: the unit the stores keep cells by, e.g. "day.bs". */
export type View = `${Granularity}.${Rollup}`;
export const VIEWS: View[] = (["day", "hour"] as const).flatMap((g) =>
  ROLLUP_NAMES.map((r): View => `${g}.${r}`),
);

/** The smallest rollup holding every field in `fields`. */
export function rollupFor(fields: Iterable<GroupField>): Rollup {
  const need = [...fields];
  return (
    ROLLUP_NAMES.find((r) => need.every((f) => (ROLLUPS[r] as readonly string[]).includes(f))) ??
    "all"
  );
}

/**
 * The key of an event's `all` cell: its group fields (ROLLUPS.all order), encoded (slugs
 * lower-cased), joined by "|".
 */
export function allKey(
  e: Pick<UsageEvent, "keyId" | "slug" | "variant" | "format" | "bucket" | "status">,
): string {
  const key = enc(typeof e.keyId === "string" ? e.keyId : "");
  const brand = enc(typeof e.slug === "string" ? e.slug.toLowerCase() : null);
  const variant = enc(typeof e.variant === "string" ? e.variant : null);
  return `${e.bucket}|${key}|${brand}|${variant}|${enc(formatOf(e))}|${e.status}`;
}

/** The group fields of a cell key of a rollup (the others are absent). */
export function groupOf(rollup: Rollup, key: string): Partial<CellGroup> {
  const parts = key.split("|");
  const out: Partial<CellGroup> = {};
  ROLLUPS[rollup].forEach((f, i) => {
    const v = parts[i] as string;
    if (f === "status") out.status = Number(v);
    else if (f === "bucket") out.bucket = v;
    else if (f === "key") out.key = dec(v) ?? "";
    else out[f] = dec(v);
  });
  return out;
}

/** The misses an event records (only well-formed strings). */
export const missesOf = (e: UsageEvent): string[] =>
  Array.isArray(e.miss) ? e.miss.filter((m): m is string => typeof m === "string") : [];

/** Brand or key filters whose copies of an account's past cells are kept (the last asked). */
const HINTS_KEPT = 8;

/** What a key id maps to: a rollup's key, or the brand or key field alone. */
type Part = Rollup | "brand" | "key";

/** Cells of one period: cell key → cell. */
export type PeriodCells = Map<string, Cell>;

/**
 * One period (day or hour) of an account: the cells of the `all` rollup, kept current by every
 * event, and the other rollups derived from them when a query asks (kept until the next event
 * of the period changes `v`).
 */
interface Period {
  /** `all` cells: one per distinct group of every field */
  cells: PeriodCells;
  /** bumped by every event counted into the period */
  v: number;
  derived?: Map<Rollup, { v: number; cells: PeriodCells }>;
  /** the `all` cells by brand and by key (encoded), for filtered reads of `all` */
  index?: { v: number; brand: Map<string, PeriodCells>; key: Map<string, PeriodCells> };
  /** of a day: its hours' periods, by hour (packed with the day) */
  hours?: Map<number, Period>;
}

/**
 * One account's projections: the periods that still change by granularity, the past ones
 * packed; day → miss → count.
 */
export interface AccountCells {
  /** days that still change, each with its hours */
  day: Map<string, Period>;
  /**
   * the `all` cells of days before the last two the account had events on, and of their hours:
   * packed once the account moves on (a late event takes its day and hours back into `day`)
   */
  past: Record<Granularity, Segments> | null;
  /** the highest day number in `past` */
  pastMax: number;
  /**
   * copies of `past` made when a read asks, segment by segment (same segments): other rollups by
   * view, and `all` cells of one brand or key ("day.all brand=acme"; the last HINTS_KEPT asked)
   */
  pastRollups: Map<string, Segments> | null;
  misses: Map<string, Map<string, number>>;
  /** the last day and hour counted into (events come in time order: most share them) */
  last: { day: string; dayP: Period | null; hour: string; hourP: Period | null };
}

/** A period's cells as read back for a query: a map, or packed (a past period). */
export interface PeriodRow {
  t: string;
  cells: PeriodCells | Packed;
}

/** Filters a read may apply early (encoded as in cell keys); the caller filters again. */
export interface CellHint {
  brand?: string | null;
  key?: string;
}

function getOr<K, V>(m: Map<K, V>, k: K, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) {
    v = make();
    m.set(k, v);
  }
  return v;
}

const newPeriod = (): Period => ({ cells: new Map(), v: 0 });
const ALL_FIELDS: readonly GroupField[] = ROLLUPS.all;
/** positions of each rollup's fields in an `all` key */
const PICK = Object.fromEntries(
  ROLLUP_NAMES.map((r) => [r, ROLLUPS[r].map((f) => ALL_FIELDS.indexOf(f))]),
) as Record<Rollup, number[]>;

/** The key of an `all` cell in rollup `r`. */
export function rollupKey(allKey: string, r: Rollup): string {
  if (r === "all") return allKey;
  const parts = allKey.split("|");
  return PICK[r].map((i) => parts[i]).join("|");
}

/** Add cell `c` into `into` (counts and histogram). */
function mergeCell(into: Cell, c: Cell): void {
  into.n += c.n;
  into.e += c.e;
  into.r += c.r;
  for (let i = 0; i < c.h.length; i += 2) addToBin(into.h, c.h[i] as number, c.h[i + 1] as number);
}

/**
 * Cell maps that never change once made (a period's derived rollups and brand/key subsets: a
 * change of the period makes new ones), so a reader may keep what it computes from one.
 */
const sealed = new WeakSet<PeriodCells>();
export const isSealed = (cells: PeriodCells): boolean => sealed.has(cells);

/** Cells of rollup `r` summed from `all` cells (keys through `intern`: one copy each). */
function derive(cells: PeriodCells, r: Rollup, intern: (k: string) => string): PeriodCells {
  const out: PeriodCells = new Map();
  sealed.add(out);
  cells.forEach((c, key) => {
    const k = rollupKey(key, r);
    let into = out.get(k);
    if (!into) {
      into = emptyCell();
      out.set(intern(k), into);
    }
    mergeCell(into, c);
  });
  return out;
}

/** The brand field (encoded) of an `all` cell key. */
const brandPart = (allKey: string): string => allKey.split("|")[2] as string;
/** The key field (encoded) of an `all` cell key. */
const keyPart = (allKey: string): string => allKey.split("|")[1] as string;

/** The field a hint filters on and its encoded value (null: no filter). */
function hintPart(hint?: CellHint): { part: "brand" | "key"; want: string } | null {
  if (hint?.brand !== undefined) return { part: "brand", want: enc(hint.brand) };
  if (hint?.key !== undefined) return { part: "key", want: enc(hint.key) };
  return null;
}

/** Which `all` cell keys a hint keeps (null: every one). */
export function hintFilter(hint?: CellHint): ((allKey: string) => boolean) | null {
  const h = hintPart(hint);
  if (!h) return null;
  const part = h.part === "brand" ? brandPart : keyPart;
  return (k) => part(k) === h.want;
}

/** A period's name: the day, or (hour 0-23) the hour as YYYY-MM-DDTHH. */
const periodName = (day: string, hour: number): string =>
  hour === -1 ? day : `${day}T${String(hour).padStart(2, "0")}`;

/** The live segments of day numbers lo..hi: [period name, segment] (dropped ones are day -1). */
function* pastPeriods(src: Segments, lo = 0, hi = Number.POSITIVE_INFINITY) {
  const days = new Map<number, string>();
  for (let s = 0; s < src.segs; s++) {
    const n = src.segDay[s] as number;
    if (n < lo || n > hi) continue;
    yield [
      periodName(
        getOr(days, n, () => dayOfNumber(n)),
        src.segHour[s] as number,
      ),
      s,
    ] as const;
  }
}

/**
 * The cells and misses of events, in memory: a batch's delta (the MongoDB store).
 * Appending an event updates two cells (its day's and its hour's `all` cell); the smaller
 * rollups are derived per period on first read and kept until the period changes, so a past
 * period is derived once. When an account's events move to a new day, its days before the
 * previous one (and their hours) are packed into flat arrays: a year of cells is then a few
 * arrays per account, which the garbage collector does not walk, rather than several objects
 * per cell and period.
 */
export class CellProjection {
  readonly accounts = new Map<string, AccountCells>();
  /** each distinct cell key once: its id (its place in `table`) */
  private keys = new Map<string, number>();
  private table: string[] = [];
  /** per rollup (and brand and key part), the id of an `all` key's part, plus one (0: not known) */
  private partIds = new Map<Part, Int32Array>();

  addAll(events: readonly UsageEvent[]): void {
    for (const e of events) this.add(e);
  }

  add(e: UsageEvent): void {
    let a = this.accounts.get(e.accountId);
    if (!a) {
      a = {
        day: new Map(),
        past: null,
        pastMax: Number.NEGATIVE_INFINITY,
        pastRollups: null,
        misses: new Map(),
        last: { day: "", dayP: null, hour: "", hourP: null },
      };
      this.accounts.set(e.accountId, a);
    }
    const n = e.count ?? 1;
    const bin = latencyBin(typeof e.latencyMs === "number" ? e.latencyMs : 0);
    const last = a.last;
    if (last.day !== e.day || !last.dayP) {
      if (last.day !== "" && e.day > last.day) this.packBefore(a, last.day);
      last.day = e.day;
      last.dayP = a.day.get(e.day) ?? this.unpack(a, e.day) ?? getOr(a.day, e.day, newPeriod);
    }
    const hour = e.ts.slice(0, 13);
    if (last.hour !== hour || !last.hourP) {
      last.hour = hour;
      last.dayP.hours ??= new Map();
      last.hourP = getOr(last.dayP.hours, Number(hour.slice(11, 13)), newPeriod);
    }
    const key = allKey(e);
    const d = last.dayP;
    const h = last.hourP;
    d.v++;
    h.v++;
    countCell(this.cell(d.cells, key), e.status, bin, n);
    countCell(this.cell(h.cells, key), e.status, bin, n);
    const misses = missesOf(e);
    if (misses.length > 0) {
      const day = getOr(a.misses, e.day, () => new Map<string, number>());
      for (const m of misses) day.set(m, (day.get(m) ?? 0) + n);
    }
  }

  private cell(cells: PeriodCells, key: string): Cell {
    let cell = cells.get(key);
    if (!cell) {
      cell = emptyCell();
      cells.set(this.intern(key), cell);
    }
    return cell;
  }

  /** one copy of each key string, shared by every period that has the cell */
  private intern = (key: string): string => this.table[this.idOf(key)] as string;

  private idOf(key: string): number {
    let id = this.keys.get(key);
    if (id === undefined) {
      id = this.table.length;
      this.table.push(key);
      this.keys.set(key, id);
    }
    return id;
  }

  /** A map's cells as [key id, cell] pairs. */
  private *byId(cells: PeriodCells): Generator<[number, Cell]> {
    for (const [k, c] of cells) yield [this.idOf(k), c];
  }

  /** Pack the account's days before `day`, and their hours. */
  private packBefore(a: AccountCells, day: string): void {
    for (const [t, p] of a.day) {
      if (t >= day) continue;
      a.past ??= { day: new Segments(this.table), hour: new Segments(this.table) };
      const n = dayNumber(t);
      a.past.day.add(n, -1, this.byId(p.cells), p.cells.size);
      for (const [h, hp] of p.hours ?? [])
        a.past.hour.add(n, h, this.byId(hp.cells), hp.cells.size);
      a.day.delete(t);
      a.pastMax = Math.max(a.pastMax, n);
    }
  }

  /** Take a packed day (and its hours) back into maps, for a late event: its period, if packed. */
  private unpack(a: AccountCells, day: string): Period | undefined {
    const n = dayNumber(day);
    if (!a.past || n > a.pastMax) return undefined;
    const [s] = a.past.day.segmentsOf(n);
    if (s === undefined) return undefined;
    const hours = new Map<number, Period>();
    const dayP: Period = { cells: cellMap(a.past.day.slice(s)), v: 0, hours };
    this.kill(a, "day", s);
    for (const s of a.past.hour.segmentsOf(n)) {
      hours.set(a.past.hour.segHour[s] as number, { cells: cellMap(a.past.hour.slice(s)), v: 0 });
      this.kill(a, "hour", s);
    }
    a.day.set(day, dayP);
    return dayP;
  }

  /** Drop past segment s of granularity g, and its copies in the derived rollups. */
  private kill(a: AccountCells, g: Granularity, s: number): void {
    a.past?.[g].kill(s);
    for (const [name, copy] of a.pastRollups ?? [])
      if (name.startsWith(`${g}.`) && s < copy.segs) copy.kill(s);
  }

  /** The id of a part of `all` key id `id`: its rollup-`part` key, or its brand or key field. */
  private partId(part: Part, id: number): number {
    let ids = this.partIds.get(part) ?? new Int32Array(0);
    if (id >= ids.length) {
      const grown = new Int32Array(Math.max(this.table.length, 2 * ids.length, 16));
      grown.set(ids);
      ids = grown;
      this.partIds.set(part, ids);
    }
    let out = (ids[id] as number) - 1;
    if (out < 0) {
      const key = this.table[id] as string;
      out = this.idOf(
        part === "brand" ? brandPart(key) : part === "key" ? keyPart(key) : rollupKey(key, part),
      );
      ids[id] = out + 1;
    }
    return out;
  }

  /** The account's past segments of a view: derived for segments not derived yet. */
  private pastRollup(a: AccountCells, past: Segments, g: Granularity, r: Rollup): Segments {
    if (r === "all") return past;
    return this.pastCopy(a, past, `${g}.${r}`, (out, s) => {
      const sums = new Map<number, Cell>();
      for (const [id, c] of past.cellsOf(s))
        mergeCell(getOr(sums, this.partId(r, id), emptyCell), c);
      out.add(past.segDay[s] as number, past.segHour[s] as number, sums, sums.size);
    });
  }

  /** The account's past `all` segments of one brand or key (cells of other ones left out). */
  private pastHinted(
    a: AccountCells,
    past: Segments,
    g: Granularity,
    { part, want }: { part: "brand" | "key"; want: string },
  ): Segments {
    const keeps = (id: number) => this.table[this.partId(part, id)] === want;
    const name = `${g}.all ${part}=${want}`;
    return this.pastCopy(a, past, name, (out, s) => out.copy(past, s, keeps), true);
  }

  /**
   * A copy of `past` by name, its new segments added by `addSegment`; copies for a filter
   * (`filtered`) are kept few.
   */
  private pastCopy(
    a: AccountCells,
    past: Segments,
    name: string,
    addSegment: (out: Segments, s: number) => void,
    filtered = false,
  ): Segments {
    a.pastRollups ??= new Map();
    let out = a.pastRollups.get(name);
    if (filtered) {
      // most recently asked last; the oldest beyond HINTS_KEPT dropped
      a.pastRollups.delete(name);
      const hints = [...a.pastRollups.keys()].filter((k) => k.includes("="));
      for (const k of hints.slice(0, Math.max(0, hints.length - HINTS_KEPT + 1)))
        a.pastRollups.delete(k);
    }
    out ??= new Segments(this.table);
    a.pastRollups.set(name, out);
    for (let s = out.segs; s < past.segs; s++) addSegment(out, s);
    return out;
  }

  /** The cells of one period in rollup `r` (derived once per change of the period). */
  private rollup(p: Period, r: Rollup): PeriodCells {
    if (r === "all") return p.cells;
    p.derived ??= new Map();
    const had = p.derived.get(r);
    if (had && had.v === p.v) return had.cells;
    const cells = derive(p.cells, r, this.intern);
    p.derived.set(r, { v: p.v, cells });
    return cells;
  }

  /** The `all` cells of one period with the brand or key of `hint` (a superset of the match). */
  private hinted(p: Period, hint: CellHint): PeriodCells {
    if (!p.index || p.index.v !== p.v) {
      const brand = new Map<string, PeriodCells>();
      const key = new Map<string, PeriodCells>();
      for (const [k, c] of p.cells) {
        getOr(brand, brandPart(k), () => new Map()).set(k, c);
        getOr(key, keyPart(k), () => new Map()).set(k, c);
      }
      for (const m of brand.values()) sealed.add(m);
      for (const m of key.values()) sealed.add(m);
      p.index = { v: p.v, brand, key };
    }
    const none: PeriodCells = new Map();
    if (hint.brand !== undefined) return p.index.brand.get(enc(hint.brand)) ?? none;
    return p.index.key.get(enc(hint.key ?? "")) ?? none;
  }

  /**
   * An account's periods from..to (inclusive, period strings) of one view. With a hint, a read
   * of the `all` rollup may return only the cells of that brand or key.
   */
  periods(accountId: string, view: View, from: string, to: string, hint?: CellHint): PeriodRow[] {
    const [g, r] = view.split(".") as [Granularity, Rollup];
    const out: PeriodRow[] = [];
    const a = this.accounts.get(accountId);
    if (!a) return out;
    const useHint = r === "all" && hint && (hint.brand !== undefined || hint.key !== undefined);
    for (const [t, p] of this.live(a, g))
      if (t >= from && t <= to)
        out.push({ t, cells: useHint ? this.hinted(p, hint) : this.rollup(p, r) });
    if (a.past) this.pastRows(a, a.past[g], g, r, from, to, useHint ? hint : undefined, out);
    return out;
  }

  /** The account's periods that still change, of one granularity: [period, its cells]. */
  private *live(a: AccountCells, g: Granularity): Generator<[string, Period]> {
    for (const [day, p] of a.day)
      if (g === "day") yield [day, p];
      else for (const [h, hp] of p.hours ?? []) yield [periodName(day, h), hp];
  }

  /** The packed periods from..to of a view (with a hint: only cells the hint keeps) into `out`. */
  private pastRows(
    a: AccountCells,
    past: Segments,
    g: Granularity,
    r: Rollup,
    from: string,
    to: string,
    hint: CellHint | undefined,
    out: PeriodRow[],
  ): void {
    const h = hintPart(hint);
    const src = h ? this.pastHinted(a, past, g, h) : this.pastRollup(a, past, g, r);
    const lo = dayNumber(from.slice(0, 10));
    const hi = dayNumber(to.slice(0, 10));
    for (const [t, s] of pastPeriods(src, lo, hi))
      if (t >= from && t <= to) out.push({ t, cells: src.slice(s) });
  }

  /** Every view's periods of one account: [view, period, cells]. */
  *viewPeriods(a: AccountCells): Generator<[View, string, PeriodCells]> {
    for (const g of ["day", "hour"] as const)
      for (const [t, p] of this.live(a, g))
        for (const r of ROLLUP_NAMES) yield [`${g}.${r}`, t, this.rollup(p, r)];
    const past = a.past;
    if (!past) return;
    for (const g of ["day", "hour"] as const)
      for (const r of ROLLUP_NAMES) {
        const src = this.pastRollup(a, past[g], g, r);
        for (const [t, s] of pastPeriods(src)) yield [`${g}.${r}`, t, cellMap(src.slice(s))];
      }
  }

  /** Miss counts of days from..to: of one account, or of every account (null). */
  misses(accountId: string | null, from: string, to: string): Map<string, number> {
    const out = new Map<string, number>();
    const accounts =
      accountId === null ? [...this.accounts.values()] : [this.accounts.get(accountId)];
    for (const a of accounts)
      for (const [day, misses] of a?.misses ?? [])
        if (day >= from && day <= to)
          for (const [m, n] of misses) out.set(m, (out.get(m) ?? 0) + n);
    return out;
  }

  clear(): void {
    this.accounts.clear();
    this.keys.clear();
    this.table = [];
    this.partIds.clear();
  }
}
