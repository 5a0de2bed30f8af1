import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { parseEvent } from "./event-scan";

/**
 * Where each account's lines are in one day file, so an export reads only the account's lines
 * (positioned reads) instead of the whole log. Per indexed line, in typed arrays: its byte
 * offset and length, the account's number (AccountNumbers) and the time its id carries (ms
 * after the day's start): 20 bytes a line, no object per line or per account.
 *
 * Invariant: every line in bytes [0, indexedTo) of the file is indexed (lines that are not
 * usage events are left out). Appends add their own lines when they land at indexedTo
 * (`addWritten`); anything else (start-up, an append that raced a catch-up, a torn tail) is read
 * from the file by `catchUp`, which indexes the whole lines past indexedTo. Files only grow (a
 * removed day file takes its index with it), so an offset stays valid.
 */
export class DayIndex {
  indexedTo = 0;
  n = 0;
  off = new Float64Array(64);
  len = new Uint32Array(64);
  acct = new Uint32Array(64);
  /** the id's time in ms after the day's start (ids of the UUIDv7 form) */
  t = new Int32Array(64);
  /** an id of another form or far off the day: its lines are not ordered by `t` */
  odd = false;
  readonly start: number;

  constructor(readonly day: string) {
    this.start = Date.parse(`${day}T00:00:00Z`);
  }

  push(acct: number, off: number, len: number, ms: number) {
    if (this.n === this.off.length) this.grow();
    const i = this.n++;
    this.off[i] = off;
    this.len[i] = len;
    this.acct[i] = acct;
    const t = ms - this.start;
    if (Number.isFinite(t) && t >= -(2 ** 31) && t < 2 ** 31) this.t[i] = t;
    else this.odd = true;
  }

  private grow() {
    const cap = this.off.length * 2;
    this.off = grown(this.off, cap);
    this.len = grown(this.len, cap);
    this.acct = grown(this.acct, cap);
    this.t = grown(this.t, cap);
  }
}

/** a copy of a typed array with room for `cap` elements */
function grown<T extends Float64Array | Uint32Array | Int32Array>(a: T, cap: number): T {
  const b = new (a.constructor as new (n: number) => T)(cap);
  b.set(a);
  return b;
}

/** Small numbers for account ids, so a DayIndex stores 4 bytes per line for its account. */
export class AccountNumbers {
  private ids = new Map<string, number>();

  of(accountId: string): number {
    let n = this.ids.get(accountId);
    if (n === undefined) {
      n = this.ids.size;
      this.ids.set(accountId, n);
    }
    return n;
  }

  /** the account's number, or undefined when no line names it */
  find(accountId: string): number | undefined {
    return this.ids.get(accountId);
  }
}

const hexValue = (c: number): number =>
  c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;

/** the ms a UUIDv7 id carries (its first 48 bits), from bytes b[at..]; NaN for another form */
function msOfBytes(b: Uint8Array, at: number): number {
  let v = 0;
  for (let i = 0; i < 13; i++) {
    if (i === 8) {
      if (b[at + 8] !== 45 /* - */) return Number.NaN;
      continue;
    }
    const h = hexValue(b[at + i] as number);
    if (h < 0) return Number.NaN;
    v = v * 16 + h;
  }
  return v;
}

/** the ms a UUIDv7 id carries; NaN for an id of another form */
export function idMs(id: string): number {
  if (id.length < 13 || id.charCodeAt(8) !== 45 /* - */) return Number.NaN;
  let v = 0;
  for (let i = 0; i < 13; i++) {
    if (i === 8) continue;
    const h = hexValue(id.charCodeAt(i));
    if (h < 0) return Number.NaN;
    v = v * 16 + h;
  }
  return v;
}

const CHUNK = 4 * 1024 * 1024;
/**
 * The fixed parts of a canonical event line (JsonlEncoder's form): `{"id":"<36>","ts":"<24>",
 * "day":"<10>","accountId":"...`, so id at 7, ts at 51, day at 84 and the account at 109.
 */
export const HEAD = Buffer.from('{"id":"');
export const TS = Buffer.from('","ts":"');
export const DAY = Buffer.from('","day":"');
export const ACC = Buffer.from('","accountId":"');

/** b[at..at+l.length) holds the bytes of l, within the line that ends at `end` */
export function eq(b: Uint8Array, at: number, l: Uint8Array, end: number): boolean {
  if (at + l.length > end) return false;
  for (let i = 0; i < l.length; i++) if (b[at + i] !== l[i]) return false;
  return true;
}

/**
 * Index the whole lines of the file past idx.indexedTo. Canonical lines (JsonlEncoder's form:
 * id, ts, day, accountId first) are read by position without being decoded; any other line is
 * parsed. Synchronous: nothing else touches the index meanwhile.
 */
export function catchUp(path: string, idx: DayIndex, accounts: AccountNumbers): void {
  if (!existsSync(path)) return;
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, size - idx.indexedTo)));
    let lastAcc = "";
    let lastAccBytes = Buffer.alloc(0);
    let lastNo = 0;
    while (idx.indexedTo < size) {
      const base = idx.indexedTo;
      const want = Math.min(buf.length, size - base);
      const got = readSync(fd, buf, 0, want, base);
      if (got <= 0) break;
      const end = buf.lastIndexOf(10, got - 1);
      if (end < 0) {
        // a line longer than the buffer: read it whole next round, or stop at a torn tail
        if (got < buf.length) break;
        buf = Buffer.allocUnsafe(buf.length * 2);
        continue;
      }
      for (let p = 0; p < end; ) {
        const nl = buf.indexOf(10, p);
        if (nl > p) {
          let acc = -1;
          let ms = Number.NaN;
          if (
            eq(buf, p, HEAD, nl) &&
            eq(buf, p + 43, TS, nl) &&
            eq(buf, p + 75, DAY, nl) &&
            eq(buf, p + 94, ACC, nl)
          ) {
            const a = p + 109;
            const q = buf.indexOf(34 /* " */, a);
            if (q > a && q < nl && buf[q - 1] !== 92 /* \ */ && buf[nl - 1] === 125 /* } */) {
              const bytes = buf.subarray(a, q);
              if (!bytes.equals(lastAccBytes)) {
                lastAcc = bytes.toString("utf8");
                lastAccBytes = Buffer.from(bytes);
                lastNo = accounts.of(lastAcc);
              }
              acc = lastNo;
              ms = msOfBytes(buf, p + 7);
            }
          }
          if (acc < 0) {
            const e = parseEvent(buf.toString("utf8", p, nl));
            if (e) {
              acc = accounts.of(e.accountId);
              ms = idMs(e.id);
            }
          }
          if (acc >= 0) idx.push(acc, base + p, nl - p, ms);
        }
        p = nl + 1;
      }
      idx.indexedTo = base + end + 1;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Index lines an append just wrote at byte `at` of the file: `bytes` holds one line per event
 * of `events`, in order. Only when they follow the indexed lines directly (otherwise catchUp
 * reads them later).
 */
export function addWritten(
  idx: DayIndex,
  accounts: AccountNumbers,
  at: number,
  bytes: Uint8Array,
  events: readonly { id: string; accountId: string }[],
): void {
  if (idx.indexedTo !== at) return;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const n = idx.n;
  let p = 0;
  let lastAcc = "";
  let lastNo = 0;
  for (const e of events) {
    const nl = b.indexOf(10, p);
    if (nl < 0) break;
    if (e.accountId !== lastAcc) {
      lastAcc = e.accountId;
      lastNo = accounts.of(lastAcc);
    }
    idx.push(lastNo, at + p, nl - p, idMs(e.id));
    p = nl + 1;
  }
  // not one line per event: left to catchUp
  if (p !== b.length) idx.n = n;
  else idx.indexedTo = at + p;
}
