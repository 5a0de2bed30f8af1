import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { log } from "../../platform/log";
import { collectGarbage } from "../../platform/memory";
import { BUCKETS, type Bucket } from "../../quota/limits";
import { isUsageEvent } from "../../usage/daily";
import type { UsageEvent } from "../../usage/port";

/**
 * Reading day files fast and in little memory: start-up replays every event of the log, and a
 * busy day holds millions (6,000,000 events are about 1.4 GB of JSONL).
 *
 *  - `IdHashSet` keeps 64-bit hashes of event ids in one typed array (16 bytes per event at
 *    most, against about 100 for a Set of id strings). Two distinct ids of one day share a hash
 *    with odds of about n^2 / 2^64 (1 in 1,000,000 for 6,000,000 events).
 *  - `tallyEventFile` streams a file in 4 MB chunks and counts its events by account, key,
 *    bucket and status, reading the fields straight out of each line as the service writes it
 *    (JsonlEncoder's canonical order, no escapes) without JSON.parse: one Map lookup per line,
 *    keyed by the line's own text from the account id to the bucket, and no string made for
 *    the other fields. Any other line (another field order, an escape, a torn line) goes
 *    through JSON.parse and isUsageEvent.
 */

let hashHi = 0;
let hashLo = 0;

/** 64-bit hash of s[start..end) into hashHi/hashLo (two 32-bit FNV-1a lanes, then mixed) */
function hashRange(s: string, start: number, end: number): void {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b ^= b >>> 15;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 16;
  hashHi = a >>> 0;
  // 0 marks an empty slot
  hashLo = (b | 1) >>> 0;
}

/** A set of event ids kept as 64-bit hashes (open addressing, linear probing). */
export class IdHashSet {
  private slots: Uint32Array;
  private mask: number;
  size = 0;

  constructor(expected = 1024) {
    let cap = 1024;
    while (cap * 0.75 < expected) cap *= 2;
    this.slots = new Uint32Array(cap * 2);
    this.mask = cap - 1;
  }

  /** add an id; false when it was there already */
  add(id: string): boolean {
    hashRange(id, 0, id.length);
    return this.addHash(hashHi, hashLo);
  }

  has(id: string): boolean {
    hashRange(id, 0, id.length);
    const s = this.slots;
    for (let i = hashHi & this.mask; ; i = (i + 1) & this.mask) {
      const lo = s[2 * i + 1];
      if (lo === 0) return false;
      if (lo === hashLo && s[2 * i] === hashHi) return true;
    }
  }

  /** add a hash made by hashRange; false when it was there already */
  addHash(hi: number, lo: number): boolean {
    const s = this.slots;
    let i = hi & this.mask;
    for (; ; i = (i + 1) & this.mask) {
      const at = s[2 * i + 1];
      if (at === 0) break;
      if (at === lo && s[2 * i] === hi) return false;
    }
    s[2 * i] = hi;
    s[2 * i + 1] = lo;
    if (++this.size > (this.mask + 1) * 0.75) this.grow();
    return true;
  }

  private grow() {
    const old = this.slots;
    const cap = (this.mask + 1) * 2;
    this.slots = new Uint32Array(cap * 2);
    this.mask = cap - 1;
    for (let j = 0; j < old.length; j += 2) {
      const lo = old[j + 1] as number;
      if (lo === 0) continue;
      const hi = old[j] as number;
      let i = hi & this.mask;
      while (this.slots[2 * i + 1] !== 0) i = (i + 1) & this.mask;
      this.slots[2 * i] = hi;
      this.slots[2 * i + 1] = lo;
    }
  }
}

/** bytes read at a time when a day file is streamed */
const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * The file's text a chunk of whole lines at a time (the last chunk may end in a line without
 * its newline: torn by a crash mid-write, or whole).
 */
export function* lineChunks(path: string): Generator<{ text: string; last: boolean }> {
  if (!existsSync(path)) return;
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let pending: Buffer = Buffer.alloc(0);
  try {
    let pos = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK_BYTES, pos);
      if (n === 0) break;
      pos += n;
      const end = buf.lastIndexOf(10, n - 1);
      if (end < 0) {
        pending = Buffer.concat([pending, buf.subarray(0, n)]);
        continue;
      }
      const head = pending.length ? Buffer.concat([pending, buf.subarray(0, end)]) : buf;
      const text = head.toString("utf8", 0, pending.length ? head.length : end);
      pending = Buffer.from(buf.subarray(end + 1, n));
      yield { text, last: false };
    }
    if (pending.length > 0) yield { text: pending.toString("utf8"), last: true };
  } finally {
    closeSync(fd);
  }
}

const BUCKET_OF = new Map<string, Bucket>(BUCKETS.map((b) => [b, b]));

const at = (s: string, i: number, lit: string) => s.startsWith(lit, i);

/** a run of ASCII digits at s[i..]: its value, or -1; the end in scanEnd */
let scanEnd = 0;
function digits(s: string, i: number): number {
  let v = 0;
  let j = i;
  for (; j < s.length; j++) {
    const c = s.charCodeAt(j) - 48;
    if (c < 0 || c > 9) break;
    v = v * 10 + c;
  }
  scanEnd = j;
  return j === i || j - i > 9 ? -1 : v;
}

/** positions and values of the last line readCanonical accepted */
const line = {
  accStart: 0,
  accEnd: 0,
  keyStart: 0,
  keyEnd: 0,
  bucketStart: 0,
  groupEnd: 0,
  status: 0,
  count: 1,
};

/**
 * Read one canonical line s[p..end) of `day` into `line` and the id's hash; false when the line
 * is not in that form. The caller has checked that the line holds no backslash, so every quote
 * is a delimiter.
 */
function readCanonical(s: string, p: number, end: number, day: string): boolean {
  if (s.charCodeAt(end - 1) !== 125 /* } */ || !at(s, p, '{"id":"')) return false;
  const idStart = p + 7;
  const idEnd = s.indexOf('"', idStart);
  if (idEnd < 0 || idEnd >= end || !at(s, idEnd, '","ts":"')) return false;
  const tsEnd = s.indexOf('"', idEnd + 8);
  if (tsEnd < 0 || !at(s, tsEnd, '","day":"')) return false;
  const dayStart = tsEnd + 9;
  if (!at(s, dayStart, day) || !at(s, dayStart + 10, '","accountId":"')) return false;
  const accStart = dayStart + 25;
  const accEnd = s.indexOf('"', accStart);
  if (accEnd < 0 || accEnd >= end || !at(s, accEnd, '","keyId":"')) return false;
  const keyStart = accEnd + 11;
  const keyEnd = s.indexOf('"', keyStart);
  if (keyEnd < 0 || keyEnd >= end || !at(s, keyEnd, '","tier":"')) return false;
  const tierEnd = s.indexOf('"', keyEnd + 10);
  if (tierEnd < 0 || tierEnd >= end || !at(s, tierEnd, '","bucket":"')) return false;
  const bucketStart = tierEnd + 12;
  const bucketEnd = s.indexOf('"', bucketStart);
  if (bucketEnd < 0 || bucketEnd >= end) return false;
  const statusAt = s.indexOf(',"status":', bucketEnd);
  if (statusAt < 0 || statusAt >= end) return false;
  const status = digits(s, statusAt + 10);
  if (status < 0 || !at(s, scanEnd, ',"latencyMs":')) return false;
  // latencyMs, then the end of the line or the count of folded refusals
  let j = scanEnd + 13;
  for (let c = s.charCodeAt(j); j < end && c !== 44 /* , */ && c !== 125 /* } */; )
    c = s.charCodeAt(++j);
  let count = 1;
  if (j !== end - 1) {
    if (!at(s, j, ',"count":')) return false;
    count = digits(s, j + 9);
    if (count < 1 || scanEnd !== end - 1) return false;
  }
  hashRange(s, idStart, idEnd);
  line.accStart = accStart;
  line.accEnd = accEnd;
  line.keyStart = keyStart;
  line.keyEnd = keyEnd;
  line.bucketStart = bucketStart;
  line.groupEnd = bucketEnd;
  line.status = status;
  line.count = count;
  return true;
}

/** One day file's events of one account, key, bucket and status. */
export interface TallyRow {
  accountId: string;
  keyId: string;
  bucket: Bucket;
  status: number;
  /** events (lines) */
  events: number;
  /** requests they stand for (a folded refusal stands for its `count`) */
  requests: number;
}

/**
 * Count one day file's events by account, key, bucket and status, each event id once: ids
 * already in `ids` are skipped, the others are added to it. Unreadable lines are skipped with a
 * warning, never fatal (`torn`: the file's last line, without its newline). Events of another
 * day than `day` (a file holds one day: only a hand-edited file has them) are returned whole
 * in `others`, uncounted.
 */
export function tallyEventFile(
  path: string,
  day: string,
  ids: IdHashSet,
): { rows: TallyRow[]; events: number; others: UsageEvent[] } {
  // groups by the line's raw text from the account id to the bucket
  const groups: Group[] = [];
  const byKey = new Map<string, Group>();
  const others: UsageEvent[] = [];
  let events = 0;
  let lineNo = 0;
  let chunks = 0;
  for (const { text, last } of lineChunks(path)) {
    // the chunks' strings are outside the collector's heap: left to it, a day file's worth of
    // them stays resident before it runs (+1 GB for 6,000,000 events)
    if (++chunks % 16 === 0) collectGarbage();
    let backslash = text.indexOf("\\");
    for (let p = 0; p < text.length; ) {
      let nl = text.indexOf("\n", p);
      if (nl < 0) nl = text.length;
      lineNo++;
      if (backslash >= 0 && backslash < p) backslash = text.indexOf("\\", p);
      const canonical =
        nl > p && (backslash < 0 || backslash >= nl) && readCanonical(text, p, nl, day);
      if (canonical) {
        // the group of the line's text from the account id to the bucket
        const { accStart, groupEnd } = line;
        const key = text.slice(accStart, groupEnd);
        let g = byKey.get(key);
        if (!g) {
          const bucket = BUCKET_OF.get(text.slice(line.bucketStart, groupEnd));
          // an unknown bucket: not a usage event (the slow path below says so)
          if (bucket) {
            g = {
              key,
              accountId: text.slice(accStart, line.accEnd),
              keyId: text.slice(line.keyStart, line.keyEnd),
              bucket,
              rows: [],
            };
            byKey.set(key, g);
            groups.push(g);
          }
        }
        if (g) {
          if (ids.addHash(hashHi, hashLo)) {
            countInto(g, line.status, line.count);
            events++;
          }
          p = nl + 1;
          continue;
        }
      }
      if (nl > p) {
        const e = parseEvent(text.slice(p, nl));
        if (!e) {
          if (text.slice(p, nl).trim()) warnUnreadable(path, lineNo, last && nl === text.length);
        } else if (ids.add(e.id)) {
          events++;
          if (e.day !== day) others.push(e);
          else {
            const keyId = typeof e.keyId === "string" ? e.keyId : "";
            // the text a canonical line of this event has there: one group for both paths
            const key = `${JSON.stringify(e.accountId).slice(1, -1)}","keyId":${JSON.stringify(keyId)},"tier":${JSON.stringify(e.tier)},"bucket":"${e.bucket}`;
            let g = byKey.get(key);
            if (!g) {
              g = {
                key,
                accountId: e.accountId,
                keyId,
                bucket: e.bucket,
                rows: [],
              };
              byKey.set(key, g);
              groups.push(g);
            }
            countInto(g, e.status, e.count ?? 1);
          }
        }
      }
      p = nl + 1;
    }
  }
  return { rows: groups.flatMap((g) => g.rows), events, others };
}

/** the events of one account, key and bucket, by status */
interface Group {
  key: string;
  accountId: string;
  keyId: string;
  bucket: Bucket;
  rows: TallyRow[];
}

function countInto(g: Group, status: number, requests: number) {
  for (const r of g.rows)
    if (r.status === status) {
      r.events++;
      r.requests += requests;
      return;
    }
  g.rows.push({
    accountId: g.accountId,
    keyId: g.keyId,
    bucket: g.bucket,
    status,
    events: 1,
    requests,
  });
}

/** A stored line as a usage event, or null when it is not one (torn, or not an event). */
export function parseEvent(text: string): UsageEvent | null {
  try {
    const value: unknown = JSON.parse(text);
    return isUsageEvent(value) ? value : null;
  } catch {
    return null;
  }
}

/** The warning for a line of a day or spill file that is not a usage event: skipped, never fatal. */
export function warnUnreadable(file: string, line: number, torn: boolean): void {
  log("warn", "skipping unreadable line in usage event log", { file, line, torn });
}
