import { closeSync, openSync, readSync } from "node:fs";
import { requestGarbageCollection } from "../../platform/memory";
import type { ExportQuery, ExportStream } from "../../usage/port";
import { ACC, DAY, type DayIndex, eq, HEAD, idMs, TS } from "./event-index";
import { IdHashSet, parseEvent } from "./event-scan";

/** lines handed out per chunk of a page */
const CHUNK_LINES = 2000;
/** lines read (and checked) at a time while a page is chosen */
const BATCH_LINES = 2000;
/** two lines this close in the file are read in one call */
const GAP_BYTES = 4096;
/** a page that handed out more bytes than this asks for a garbage collection when it ends */
const GC_AFTER_BYTES = 4 * 1024 * 1024;
/** bytes read in one call at most (a longer line is read alone) */
const READ_BYTES = 1024 * 1024;

/** A day file to read an account's lines from. */
export interface ExportDay {
  day: string;
  path: string;
  /** caught up with the file (every whole line indexed) */
  index: DayIndex;
}

/** b[at..at+n) against the bytes of l, as strings compare (ASCII) */
function cmp(b: Buffer, at: number, n: number, l: Uint8Array): number {
  const m = Math.min(n, l.length);
  for (let i = 0; i < m; i++) {
    const d = (b[at + i] as number) - (l[i] as number);
    if (d !== 0) return d;
  }
  return n - l.length;
}

/**
 * The line b[s..e) is a canonical event line (id, ts, day, accountId lead it, as JsonlEncoder
 * writes) of `day` and the account: then its id is at s+7..s+43 and its ts at s+51..s+75.
 */
const canonical = (b: Buffer, s: number, e: number, day: Uint8Array, account: Uint8Array) =>
  b[e - 1] === 125 /* } */ &&
  eq(b, s, HEAD, e) &&
  eq(b, s + 43, TS, e) &&
  eq(b, s + 75, DAY, e) &&
  eq(b, s + 84, day, e) &&
  eq(b, s + 94, ACC, e) &&
  eq(b, s + 109, account, e) &&
  b[s + 109 + account.length] === 34; /* " */

/** any other line of the account and day, parsed (null: not one) */
function parsed(b: Buffer, s: number, e: number, day: string, accountId: string) {
  const ev = parseEvent(b.toString("utf8", s, e));
  return ev && ev.accountId === accountId && ev.day === day ? ev : null;
}

/**
 * Read the lines `at[from..to)` of an index (positions into idx.off/len) with as few calls as
 * possible; `each` gets the buffer and the line's span, and stops the reading by returning false.
 */
function readSpans(
  fd: number,
  off: ArrayLike<number>,
  len: ArrayLike<number>,
  at: ArrayLike<number>,
  from: number,
  to: number,
  buf: { b: Buffer },
  each: (b: Buffer, s: number, e: number, k: number) => boolean,
): void {
  for (let k = from; k < to; ) {
    const first = at[k] as number;
    const start = off[first] as number;
    let end = start + (len[first] as number);
    let last = k + 1;
    while (last < to) {
      const j = at[last] as number;
      const o = off[j] as number;
      const e = o + (len[j] as number);
      if (o < start || o - end > GAP_BYTES || e - start > READ_BYTES) break;
      end = Math.max(end, e);
      last++;
    }
    if (buf.b.length < end - start) buf.b = Buffer.allocUnsafe(end - start);
    const b = buf.b;
    let got = 0;
    while (got < end - start) {
      const n = readSync(fd, b, got, end - start - got, start + got);
      if (n <= 0) break;
      got += n;
    }
    for (; k < last; k++) {
      const j = at[k] as number;
      const s = (off[j] as number) - start;
      const e = s + (len[j] as number);
      if (e > got) continue;
      if (!each(b, s, e, k)) return;
    }
  }
}

/**
 * One export page of an account read through the day indexes: only the account's lines are
 * read. The page is chosen first (each day's lines in the order of the time their ids carry,
 * read a batch at a time until the page is full; ids, offsets and lengths are kept, not the
 * lines), then read out again a chunk at a time. The day files stay open until the page is read
 * or closed, so retention removing one meanwhile changes nothing.
 */
export function exportStream(
  accountId: string,
  account: number | undefined,
  days: ExportDay[],
  q: ExportQuery,
): ExportStream {
  const accountBytes = Buffer.from(accountId);
  const fds: number[] = [];
  const dayOf: string[] = [];
  const pageFd: number[] = [];
  const pageOff: number[] = [];
  const pageLen: number[] = [];
  let last: string | null = null;
  const buf = { b: Buffer.allocUnsafe(64 * 1024) };
  const afterMs = q.after !== null ? idMs(q.after) : Number.NaN;
  const before = Buffer.from(q.before);
  const after = q.after !== null ? Buffer.from(q.after) : null;
  try {
    for (const { day, path, index: idx } of account === undefined ? [] : days) {
      const need = q.limit - pageOff.length;
      if (need <= 0) break;
      // ids of an earlier time than the cursor's are before it
      const prune = q.after !== null && !idx.odd && Number.isFinite(afterMs);
      const afterT = afterMs - idx.start;
      const cand: number[] = [];
      const { acct, t } = idx;
      for (let i = 0; i < idx.n; i++)
        if (acct[i] === account && (!prune || (t[i] as number) >= afterT)) cand.push(i);
      if (cand.length === 0) continue;
      const ordered = !idx.odd;
      if (ordered) {
        let sorted = true;
        for (let k = 1; k < cand.length && sorted; k++)
          sorted = (t[cand[k - 1] as number] as number) <= (t[cand[k] as number] as number);
        if (!sorted) cand.sort((x, y) => (t[x] as number) - (t[y] as number) || x - y);
      }
      const fd = openSync(path, "r");
      const dayBytes = Buffer.from(day);
      /**
       * The day's first `need` lines after the cursor, oldest id first. `fast`: canonical lines
       * found in strictly ascending id order (the usual case) are taken without making a string
       * per line; null when a line breaks that (then the day is read again, not fast).
       */
      const choose = (fast: boolean) => {
        const seen = fast ? null : new IdHashSet();
        const found: { id: string; off: number; len: number }[] = [];
        const offs: number[] = [];
        const lens: number[] = [];
        const prev = Buffer.alloc(36);
        let hasPrev = false;
        let failed = false;
        let lastT = Number.NEGATIVE_INFINITY;
        let done = false;
        const each = (b: Buffer, s: number, e: number, c: number) => {
          const i = cand[c] as number;
          // a page's worth read in time order: a line of a later time has a later id
          if (ordered && offs.length + found.length >= need && (t[i] as number) > lastT) {
            done = true;
            return false;
          }
          lastT = t[i] as number;
          if (canonical(b, s, e, dayBytes, accountBytes)) {
            if (cmp(b, s + 51, 24, before) >= 0 || (after && cmp(b, s + 7, 36, after) <= 0))
              return true;
            if (fast) {
              if (hasPrev && cmp(b, s + 7, 36, prev) <= 0) {
                failed = true;
                return false;
              }
              // past a full page: only checked (a tie of the last time may still come before)
              if (offs.length >= need) return true;
              b.copy(prev, 0, s + 7, s + 43);
              hasPrev = true;
              offs.push(idx.off[i] as number);
              lens.push(idx.len[i] as number);
              return true;
            }
            const id = b.toString("latin1", s + 7, s + 43);
            if (seen?.add(id))
              found.push({ id, off: idx.off[i] as number, len: idx.len[i] as number });
            return true;
          }
          if (fast) {
            failed = true;
            return false;
          }
          const ev = parsed(b, s, e, day, accountId);
          if (!ev || ev.ts >= q.before || (q.after !== null && ev.id <= q.after)) return true;
          if (seen?.add(ev.id))
            found.push({ id: ev.id, off: idx.off[i] as number, len: idx.len[i] as number });
          return true;
        };
        for (let k = 0; k < cand.length && !done && !failed; k += BATCH_LINES)
          readSpans(
            fd,
            idx.off,
            idx.len,
            cand,
            k,
            Math.min(cand.length, k + BATCH_LINES),
            buf,
            each,
          );
        if (failed) return null;
        if (fast) return { offs, lens, last: hasPrev ? prev.toString("latin1") : null };
        found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const taken = found.slice(0, need);
        return {
          offs: taken.map((f) => f.off),
          lens: taken.map((f) => f.len),
          last: taken[taken.length - 1]?.id ?? null,
        };
      };
      const chosen = choose(true) ?? (choose(false) as NonNullable<ReturnType<typeof choose>>);
      if (chosen.offs.length === 0) {
        closeSync(fd);
        continue;
      }
      fds.push(fd);
      dayOf.push(day);
      const n = Math.min(need, chosen.offs.length);
      for (let k = 0; k < n; k++) {
        pageFd.push(fds.length - 1);
        pageOff.push(chosen.offs[k] as number);
        pageLen.push(chosen.lens[k] as number);
      }
      last = chosen.last;
    }
  } catch (err) {
    for (const fd of fds) closeSync(fd);
    throw err;
  }

  let pos = 0;
  let closed = false;
  let sent = 0;
  const close = () => {
    if (closed) return;
    closed = true;
    for (const fd of fds) closeSync(fd);
    // the chunks handed out are garbage now: several MB of buffers for a large page
    if (sent > GC_AFTER_BYTES) requestGarbageCollection();
  };
  const order = pageOff.map((_, k) => k);
  return {
    events: pageOff.length,
    last,
    close,
    async next() {
      if (closed || pos >= pageOff.length) {
        close();
        return null;
      }
      const to = Math.min(pageOff.length, pos + CHUNK_LINES);
      let size = 0;
      for (let k = pos; k < to; k++) size += (pageLen[k] as number) + 1;
      // a new buffer per chunk: the body stream may still hold the one before
      let out = Buffer.allocUnsafe(size);
      let w = 0;
      const put = (src: Uint8Array, from: number, end: number) => {
        if (w + end - from + 1 > out.length) {
          const grown = Buffer.allocUnsafe(Math.max(out.length * 2, w + end - from + 1));
          out.copy(grown, 0, 0, w);
          out = grown;
        }
        out.set(src.subarray(from, end), w);
        w += end - from;
        out[w++] = 10;
      };
      // the chunk's lines of one file at a time (a page spans few days)
      for (let k = pos; k < to; ) {
        const f = pageFd[k] as number;
        const day = dayOf[f] as string;
        const dayBytes = Buffer.from(day);
        let end = k + 1;
        while (end < to && pageFd[end] === f) end++;
        readSpans(fds[f] as number, pageOff, pageLen, order, k, end, buf, (b, s, e) => {
          if (canonical(b, s, e, dayBytes, accountBytes)) put(b, s, e);
          else {
            const ev = parsed(b, s, e, day, accountId);
            if (ev) {
              const json = Buffer.from(JSON.stringify(ev));
              put(json, 0, json.length);
            }
          }
          return true;
        });
        k = end;
      }
      pos = to;
      sent += w;
      return out.subarray(0, w);
    },
  };
}
