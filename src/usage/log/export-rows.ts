import { BUCKETS } from "../../quota/limits";
import { ByteReader, roomFor } from "./bytes";
import { HAS_COUNT, HAS_IDS, HAS_MISS } from "./rows";

/**
 * The export read straight from the embedded store's log rows (rows.ts), no batch decoded: a scan
 * that finds a row's events and last time, and the NDJSON lines of its events written as bytes,
 * each exactly as JSON.stringify writes the event (export-lines.ts builds the same text from a
 * batch). Rows of several runs or with explicit ids (moved from the per-event layout) are left
 * to the batch path.
 */

/** What scanRow found. */
export interface RowScan {
  n: number;
  /** epoch ms of its last event */
  last: number;
}

const r = new ByteReader(new Uint8Array(0));

/** Whether the scan path reads the row (one run, derived ids); its events and last time in `out`. */
export function scanRow(d: Uint8Array, t: number, out: RowScan): boolean {
  r.buf = d;
  r.pos = 1;
  if (r.uint() !== 1) return false;
  const n = r.uint();
  const flags = r.uint();
  if (flags & HAS_IDS) return false;
  const shapes = r.uint();
  for (let k = 7 * shapes; k > 0; k--) r.uint();
  for (let k = shapes > 1 ? 2 * n : n; k > 0; k--) r.uint();
  let dt = 0;
  for (let k = 0; k < n; k++) dt = r.uint();
  out.n = n;
  out.last = t + dt;
  return true;
}

const utf8 = new TextEncoder();
const bytesOf = (s: string) => utf8.encode(s);
const ID = bytesOf('{"id":"');
const TS = bytesOf('","ts":"');
const DAY = bytesOf('Z","day":"');
const TIER = bytesOf(',"tier":');
const ROUTE = bytesOf(',"route":');
const SLUG = bytesOf(',"slug":');
const VARIANT = bytesOf(',"variant":');
const FORMAT = bytesOf(',"format":');
const MISS = bytesOf(',"miss":[');
const STATUS = bytesOf(',"status":');
const LATENCY = bytesOf(',"latencyMs":');
const COUNT = bytesOf(',"count":');
const NULL = bytesOf("null");
const EMPTY = bytesOf('""');
const BUCKET = BUCKETS.map((b) => bytesOf(`,"bucket":"${b}"`));
const HEX = bytesOf("0123456789abcdef");
const ZERO = 48;

/** Hex digits of `v` (below 2^24) into `out` from `at`, `digits` of them. */
function hexInto(out: Uint8Array, at: number, v: number, digits: number) {
  for (let k = digits - 1; k >= 0; k--) {
    out[at + k] = HEX[v & 15] as number;
    v >>>= 4;
  }
}

/** The first 24 characters of eventId(t0, q, ·): the same for every event of a batch. */
function idStem(t0: number, q: number, out: Uint8Array) {
  const t = t0 % 2 ** 48;
  const hi = Math.floor(t / 2 ** 24);
  hexInto(out, 0, hi >>> 8, 4);
  hexInto(out, 4, hi & 0xff, 2);
  hexInto(out, 6, (t - hi * 2 ** 24) >>> 16, 2);
  out[8] = 45;
  hexInto(out, 9, (t - hi * 2 ** 24) & 0xffff, 4);
  out[13] = 45;
  out[14] = 55;
  hexInto(out, 15, Math.floor(q / 2 ** 28) % 0x1000, 3);
  out[18] = 45;
  out[19] = HEX[8 + (Math.floor(q / 2 ** 26) % 4)] as number;
  hexInto(out, 20, Math.floor(q / 2 ** 14) % 0x1000, 3);
  out[23] = 45;
}

/** The lines of one export: strings as JSON bytes by store id, times by second, cached. */
export class RowLines {
  private json: (Uint8Array | undefined)[] = [];
  private second = Number.NaN;
  private dayNo = Number.NaN;
  /** YYYY-MM-DDTHH:MM:SS. of the second, then the day's YYYY-MM-DD */
  private readonly stamp = new Uint8Array(20);
  private readonly head: Uint8Array;
  private shapes: number[] = [];
  private readonly stem = new Uint8Array(24);
  private buf = new Uint8Array(1 << 16);
  private pos = 0;

  /** `str`: a store id's string. */
  constructor(
    account: string,
    private str: (id: number) => string,
  ) {
    this.head = bytesOf(`","accountId":${JSON.stringify(account)},"keyId":`);
  }

  /** The bytes written since the last call (a chunk of the export's body). */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.pos);
    this.pos = 0;
    return out;
  }

  /** Text written as it is (lines the batch path built). */
  write(text: string): void {
    this.room(text.length * 3);
    this.pos += utf8.encodeInto(text, this.buf.subarray(this.pos)).written;
  }

  private room(n: number) {
    this.buf = roomFor(this.buf, this.pos, n);
  }

  private put(b: Uint8Array) {
    const buf = this.buf;
    const p = this.pos;
    if (b.length > 24) buf.set(b, p);
    else for (let i = 0; i < b.length; i++) buf[p + i] = b[i] as number;
    this.pos = p + b.length;
  }

  /** A non-negative integer in decimal. */
  private int(v: number) {
    if (v < 10) {
      this.buf[this.pos++] = ZERO + v;
      return;
    }
    const s = String(v);
    for (let i = 0; i < s.length; i++) this.buf[this.pos++] = s.charCodeAt(i);
  }

  /** A store id (+1; 0: null) as JSON, `none` for null. */
  private text(x: number, none: Uint8Array) {
    if (x === 0) return this.put(none);
    let s = this.json[x];
    if (s === undefined) {
      s = bytesOf(JSON.stringify(this.str(x - 1)));
      this.json[x] = s;
    }
    this.room(s.length + 64);
    this.put(s);
  }

  /** The second's text in `stamp`. */
  private setSecond(sec: number) {
    this.second = sec;
    const st = this.stamp;
    const dayNo = Math.floor(sec / 86_400);
    if (dayNo !== this.dayNo) {
      this.dayNo = dayNo;
      const day = new Date(dayNo * 86_400_000).toISOString();
      for (let i = 0; i < 11; i++) st[i] = day.charCodeAt(i);
    }
    const s = sec - dayNo * 86_400;
    const h = Math.floor(s / 3600);
    const m = Math.floor((s - h * 3600) / 60);
    const x = s - h * 3600 - m * 60;
    st[11] = ZERO + Math.floor(h / 10);
    st[12] = ZERO + (h % 10);
    st[13] = 58;
    st[14] = ZERO + Math.floor(m / 10);
    st[15] = ZERO + (m % 10);
    st[16] = 58;
    st[17] = ZERO + Math.floor(x / 10);
    st[18] = ZERO + (x % 10);
    st[19] = 46;
  }

  /**
   * Write the lines of events skip..skip+take-1 of row (t, q) (a row scanRow reads).
   */
  lines(d: Uint8Array, t: number, q: number, skip: number, take: number): void {
    r.buf = d;
    r.pos = 1;
    r.uint();
    const n = r.uint();
    const flags = r.uint();
    const nshapes = r.uint();
    const shapes = this.shapes;
    shapes.length = 7 * nshapes;
    for (let k = 0; k < 7 * nshapes; k++) shapes[k] = r.uint();
    // the columns' starts: shape indexes, slugs, times, latencies, then the optional ones
    let shapeAt = r.pos;
    if (nshapes > 1) for (let k = 0; k < n; k++) r.uint();
    let slugAt = r.pos;
    for (let k = 0; k < n; k++) r.uint();
    let timeAt = r.pos;
    for (let k = 0; k < n; k++) r.uint();
    let latAt = r.pos;
    for (let k = 0; k < n; k++) r.uint();
    let countAt = r.pos;
    if (flags & HAS_COUNT) for (let k = 0; k < n; k++) r.uint();
    let missAt = r.pos;
    const stem = this.stem;
    idStem(t, q, stem);
    const low = (q % 2 ** 14) * 2 ** 34;
    const end = skip + take;
    for (let i = 0; i < end; i++) {
      let s = 0;
      if (nshapes > 1) {
        r.pos = shapeAt;
        s = 7 * r.uint();
        shapeAt = r.pos;
      }
      r.pos = slugAt;
      const slug = r.uint();
      slugAt = r.pos;
      r.pos = timeAt;
      const at = t + r.uint();
      timeAt = r.pos;
      r.pos = latAt;
      const lat = r.uint();
      latAt = r.pos;
      let count = 1;
      if (flags & HAS_COUNT) {
        r.pos = countAt;
        count = r.uint();
        countAt = r.pos;
      }
      let missFrom = -1;
      let misses = 0;
      if (flags & HAS_MISS) {
        r.pos = missAt;
        misses = r.uint();
        missFrom = r.pos;
        for (let k = 0; k < misses; k++) r.uint();
        missAt = r.pos;
      }
      if (i < skip) continue;
      this.room(512);
      const buf = this.buf;
      // {"id":"<stem><12 hex digits: q's low 14 bits, the position, 18 zeros>"
      this.put(ID);
      for (let k = 0; k < 24; k++) buf[this.pos++] = stem[k] as number;
      const tail = low + (i % 0x10000) * 2 ** 18;
      const hi = Math.floor(tail / 2 ** 24);
      const lo = tail - hi * 2 ** 24;
      for (let k = 20; k >= 0; k -= 4) buf[this.pos++] = HEX[(hi >>> k) & 15] as number;
      for (let k = 20; k >= 0; k -= 4) buf[this.pos++] = HEX[(lo >>> k) & 15] as number;
      // ,"ts":"YYYY-MM-DDTHH:MM:SS.mmmZ","day":"YYYY-MM-DD
      this.put(TS);
      const sec = Math.floor(at / 1000);
      if (sec !== this.second) this.setSecond(sec);
      const ms = at - sec * 1000;
      this.put(this.stamp);
      buf[this.pos++] = ZERO + Math.floor(ms / 100);
      buf[this.pos++] = ZERO + (Math.floor(ms / 10) % 10);
      buf[this.pos++] = ZERO + (ms % 10);
      this.put(DAY);
      for (let k = 0; k < 10; k++) buf[this.pos++] = this.stamp[k] as number;
      this.put(this.head);
      this.text(shapes[s] as number, EMPTY);
      this.put(TIER);
      this.text(shapes[s + 1] as number, EMPTY);
      this.put(BUCKET[shapes[s + 5] as number] ?? (BUCKET[0] as Uint8Array));
      this.put(ROUTE);
      this.text(shapes[s + 2] as number, EMPTY);
      this.put(SLUG);
      this.text(slug, NULL);
      this.put(VARIANT);
      this.text(shapes[s + 3] as number, NULL);
      const format = shapes[s + 4] as number;
      if (format !== 0) {
        this.put(FORMAT);
        this.text(format, NULL);
      }
      if (missFrom >= 0 && misses > 0) {
        this.put(MISS);
        r.pos = missFrom;
        for (let k = 0; k < misses; k++) {
          if (k) this.buf[this.pos++] = 44;
          this.text(r.uint(), NULL);
        }
        this.buf[this.pos++] = 93;
      }
      this.room(64);
      this.put(STATUS);
      this.int(shapes[s + 6] as number);
      // latency in ms as JavaScript prints lat / 1000: the integer, then up to 3 decimals
      this.put(LATENCY);
      const whole = Math.floor(lat / 1000);
      this.int(whole);
      let frac = lat - whole * 1000;
      if (frac > 0) {
        this.buf[this.pos++] = 46;
        let digits = 3;
        while (frac % 10 === 0) {
          frac /= 10;
          digits--;
        }
        const f = String(frac).padStart(digits, "0");
        for (let k = 0; k < f.length; k++) this.buf[this.pos++] = f.charCodeAt(k);
      }
      if (count > 1) {
        this.put(COUNT);
        this.int(count);
      }
      this.buf[this.pos++] = 125;
      this.buf[this.pos++] = 10;
    }
  }
}
