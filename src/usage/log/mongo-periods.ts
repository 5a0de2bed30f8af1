import { Binary } from "mongodb";
import {
  decodePeriod,
  encodePeriod,
  OTHER,
  type PCell,
  PeriodCells,
  readCells,
  type StringIds,
} from "./period";

/**
 * MongoDB's period documents: one per account and UTC day (`g` "d") or hour ("h"), the period's
 * cells in the bytes the embedded store's period rows hold (period.ts), with the document's own
 * string list `s` in place of the store's string ids. A projector writes a document whole (one
 * `$set` of its bytes, conditional on its marker `m`), whatever the number of its cells.
 */
export interface PeriodDoc {
  _id: string;
  a: string;
  g: "d" | "h";
  p: string;
  /** the group that last counted into it */
  m?: string | null;
  /** the strings `d` refers to */
  s?: string[];
  /** the cells (period.ts encodePeriod) */
  d?: Binary;
}

/** A document's strings as the ids its bytes refer to (new ones appended). */
export class DocStrings implements StringIds {
  private index: Map<string, number> | null = null;

  constructor(readonly list: string[] = []) {}

  id(s: string): number {
    if (!this.index) this.index = new Map(this.list.map((x, i) => [x, i]));
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.list.length;
      this.list.push(s);
      this.index.set(s, i);
    }
    return i;
  }

  str(id: number): string {
    const s = this.list[id];
    if (s === undefined) throw new RangeError(`period document string ${id} missing`);
    return s;
  }

  /** The id of a string the document has, else undefined. */
  find(s: string): number | undefined {
    if (!this.index) this.index = new Map(this.list.map((x, i) => [x, i]));
    return this.index.get(s);
  }
}

const bytesOf = (d: PeriodDoc): Uint8Array | null =>
  d.d ? d.d.buffer.subarray(0, d.d.position) : null;

/** A document's cells (all rollups, or only rollup `only`), with the strings they were read with. */
export function cellsOfDoc(d: PeriodDoc | null | undefined, only?: number) {
  const strings = new DocStrings((d?.s ?? []).slice());
  const bytes = d ? bytesOf(d) : null;
  const cells = bytes ? decodePeriod(bytes, strings, only) : new PeriodCells();
  return { cells, strings };
}

/** The fields a document's cells are written with: its bytes and strings. */
export function periodFields(cells: PeriodCells, strings: DocStrings): { s: string[]; d: Binary } {
  const d = new Binary(encodePeriod(cells, strings));
  return { s: strings.list, d };
}

/**
 * The cells of rollup `v` of a document, for a read; of one brand only when `brand` is given
 * (null: requests about no brand; OTHER: the brands past the period's bound).
 */
export function readDocCells(
  d: PeriodDoc,
  v: number,
  brand?: string | null | typeof OTHER,
): PCell[] {
  const bytes = bytesOf(d);
  if (!bytes) return [];
  const strings = new DocStrings(d.s ?? []);
  let code: number | undefined;
  if (brand !== undefined) {
    if (brand === null) code = 0;
    else if (brand === OTHER) code = 1;
    else {
      const id = strings.find(brand);
      if (id === undefined) return [];
      code = id + 2;
    }
  }
  return readCells(bytes, strings, v, code);
}
