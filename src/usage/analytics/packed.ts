/**
 * Cells as flat typed arrays. Summing them walks contiguous memory, not one object and array per
 * cell spread over the heap; and an account's past periods kept this way are a handful of arrays
 * that the garbage collector never has to walk, however many cells they hold.
 */

import type { Cell } from "./cells";

/**
 * Cells lo..hi-1 of flat arrays: cell i has the key table[ids[i]], requests, errors and
 * rateLimited at counts[3i..3i+2], and histogram pairs hist[hStart[i]..hStart[i + 1]).
 */
export interface Packed {
  table: readonly string[];
  ids: Uint32Array;
  counts: Float64Array;
  hStart: Uint32Array;
  hist: Float64Array;
  lo: number;
  hi: number;
}

/** Whether `cells` is packed (else it is a map of cell key → cell). */
export const isPacked = (cells: object): cells is Packed => "ids" in cells;

/** A map's cells packed (keys in map order). */
export function pack(cells: ReadonlyMap<string, Cell>): Packed {
  const out = new Segments([...cells.keys()]);
  out.add(0, -1, numbered(cells.values()), cells.size);
  return out.slice(0);
}

/** Cells paired with their place: [0, first], [1, second], ... */
function* numbered(cells: Iterable<Cell>): Generator<[number, Cell]> {
  let i = 0;
  for (const c of cells) yield [i++, c];
}

/** Cell i of packed arrays, as a cell object of its own. */
function cellAt(p: Pick<Packed, "counts" | "hStart" | "hist">, i: number): Cell {
  const { counts, hStart, hist } = p;
  const h: number[] = [];
  for (let j = hStart[i] as number; j < (hStart[i + 1] as number); j++) h.push(hist[j] as number);
  return {
    n: counts[3 * i] as number,
    e: counts[3 * i + 1] as number,
    r: counts[3 * i + 2] as number,
    h,
  };
}

/** Cells as a map of cell key → cell: a map as it is, packed cells copied out. */
export function cellMap(cells: Map<string, Cell> | Packed): Map<string, Cell> {
  if (!isPacked(cells)) return cells;
  const out = new Map<string, Cell>();
  for (let i = cells.lo; i < cells.hi; i++)
    out.set(cells.table[cells.ids[i] as number] as string, cellAt(cells, i));
  return out;
}

/** `a` with room for `need` items (doubled, contents kept). */
function room<A extends Uint32Array | Float64Array | Int32Array | Int8Array>(
  a: A,
  need: number,
): A {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => A)(Math.max(need, a.length * 2, 16));
  b.set(a);
  return b;
}

/** A segment's period that no longer lives here (its cells were taken back into a map). */
const DEAD = -1;

/**
 * Segments of cells appended one after another: each segment is one period (a day number, and
 * an hour or -1 for the whole day) of one account and one rollup. Segments are only appended,
 * or dropped whole (`kill`); their cells stay where they are.
 */
export class Segments {
  segs = 0;
  segDay = new Int32Array(0);
  segHour = new Int8Array(0);
  /** cells of segment s: segStart[s]..segStart[s + 1] */
  segStart = new Uint32Array(1);
  ids = new Uint32Array(0);
  counts = new Float64Array(0);
  hStart = new Uint32Array(1);
  hist = new Float64Array(0);

  constructor(readonly table: readonly string[]) {}

  /** Append a segment: the cells of period (day, hour), as [key id, cell] pairs. */
  add(day: number, hour: number, cells: Iterable<readonly [number, Cell]>, size: number) {
    let i = this.open();
    this.ids = room(this.ids, i + size);
    this.counts = room(this.counts, 3 * (i + size));
    this.hStart = room(this.hStart, i + size + 1);
    let at = this.hStart[i] as number;
    for (const [id, c] of cells) {
      this.hist = room(this.hist, at + c.h.length);
      this.ids[i] = id;
      this.counts[3 * i] = c.n;
      this.counts[3 * i + 1] = c.e;
      this.counts[3 * i + 2] = c.r;
      for (let j = 0; j < c.h.length; j++) this.hist[at++] = c.h[j] as number;
      this.hStart[++i] = at;
    }
    this.close(day, hour, i);
  }

  /** Append segment s of `src` (same table), only its cells whose key id `keep` keeps. */
  copy(src: Segments, s: number, keep: (id: number) => boolean) {
    let i = this.open();
    const hi = src.segStart[s + 1] as number;
    for (let k = src.segStart[s] as number; k < hi; k++) {
      if (!keep(src.ids[k] as number)) continue;
      const h0 = src.hStart[k] as number;
      const h1 = src.hStart[k + 1] as number;
      this.ids = room(this.ids, i + 1);
      this.counts = room(this.counts, 3 * (i + 1));
      this.hStart = room(this.hStart, i + 2);
      const at = this.hStart[i] as number;
      this.hist = room(this.hist, at + h1 - h0);
      this.ids[i] = src.ids[k] as number;
      for (let j = 0; j < 3; j++) this.counts[3 * i + j] = src.counts[3 * k + j] as number;
      for (let j = h0; j < h1; j++) this.hist[at + j - h0] = src.hist[j] as number;
      this.hStart[++i] = at + h1 - h0;
    }
    this.close(src.segDay[s] as number, src.segHour[s] as number, i);
  }

  /** Room for one more segment: its first cell. */
  private open(): number {
    const s = this.segs;
    this.segDay = room(this.segDay, s + 1);
    this.segHour = room(this.segHour, s + 1);
    this.segStart = room(this.segStart, s + 2);
    return this.segStart[s] as number;
  }

  /** End the segment opened: period (day, hour), its cells up to `end`. */
  private close(day: number, hour: number, end: number) {
    const s = this.segs;
    this.segDay[s] = day;
    this.segHour[s] = hour;
    this.segStart[s + 1] = end;
    this.segs = s + 1;
  }

  /** Segment s's cells as [key id, cell] pairs. */
  *cellsOf(s: number): Generator<[number, Cell]> {
    for (let i = this.segStart[s] as number; i < (this.segStart[s + 1] as number); i++)
      yield [this.ids[i] as number, cellAt(this, i)];
  }

  /** Drop segment s: no read sees it again. */
  kill(s: number) {
    this.segDay[s] = DEAD;
  }

  /** The live segments of `day` (any hour). */
  segmentsOf(day: number): number[] {
    const out: number[] = [];
    for (let s = 0; s < this.segs; s++) if (this.segDay[s] === day) out.push(s);
    return out;
  }

  /** Segment s as packed cells (the arrays as they are now: later appends do not change it). */
  slice(s: number): Packed {
    const { table, ids, counts, hStart, hist } = this;
    return {
      table,
      ids,
      counts,
      hStart,
      hist,
      lo: this.segStart[s] as number,
      hi: this.segStart[s + 1] as number,
    };
  }
}

/** Day number (days since 1970-01-01) of a UTC day "YYYY-MM-DD". */
export const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00Z`) / 86_400_000;
/** The UTC day "YYYY-MM-DD" of a day number. */
export const dayOfNumber = (n: number): string =>
  new Date(n * 86_400_000).toISOString().slice(0, 10);
