import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addDays, DAY_MS, dayStart, utcDay } from "../../src/platform/day";

/**
 * A fixture recorded on one day, replayed as if it had been recorded on the run's today: every
 * date and time in it moved by the same whole number of days. Tokens it issued are as fresh as
 * when it was made, its usage events are today's, and a day file `events/2026-11-28.jsonl` is
 * renamed to today's day. The time of day is kept; only the day moves.
 *
 * What moves, in JSON and JSONL files: a string that is a whole UTC day (`2026-11-28`) or an ISO
 * time (`2026-11-28T13:35:41.378Z`), and an integer that is a time in ms since the epoch within a
 * year of the recorded day (`createdAt`, `expiresAt`). Anything else (ids, hashes, ciphertext,
 * counts) is copied as it is.
 */
export interface DatedFixture {
  /** the day the fixture was recorded (`YYYY-MM-DD`) */
  recordedOn: string;
  /** the day it is replayed on: the run's today unless a test names one */
  today: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}/;
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z)?$/;
const YEAR_MS = 366 * DAY_MS;

export function datedFixture(recordedOn: string, today = utcDay(Date.now())): DatedFixture {
  return { recordedOn, today };
}

/** `value` with every date and time in it moved from `f.recordedOn` to `f.today`. */
export function shiftDates<T>(value: T, f: DatedFixture): T {
  const days = Math.round((dayStart(f.today) - dayStart(f.recordedOn)) / DAY_MS);
  const from = dayStart(f.recordedOn);
  const walk = (v: unknown): unknown => {
    if (typeof v === "string" && ISO.test(v)) return v.replace(DAY, addDays(v.slice(0, 10), days));
    if (typeof v === "number" && Number.isInteger(v) && Math.abs(v - from) < YEAR_MS)
      return v + days * DAY_MS;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/** A file or folder name with a leading day (`2026-11-28.jsonl`) moved like the dates in it. */
const shiftName = (name: string, f: DatedFixture): string =>
  DAY.test(name) ? shiftDates(name.slice(0, 10), f) + name.slice(10) : name;

/** Copy the fixture folder `src` into `dest` (made if missing) with its dates moved. */
export function copyDatedFixture(src: string, dest: string, f: DatedFixture): void {
  mkdirSync(dest, { recursive: true });
  for (const name of readdirSync(src)) {
    const from = join(src, name);
    const to = join(dest, shiftName(name, f));
    if (statSync(from).isDirectory()) copyDatedFixture(from, to, f);
    else if (name.endsWith(".jsonl")) {
      const lines = readFileSync(from, "utf8").split("\n");
      writeFileSync(
        to,
        lines.map((l) => (l.trim() ? JSON.stringify(shiftDates(JSON.parse(l), f)) : l)).join("\n"),
      );
    } else if (name.endsWith(".json"))
      writeFileSync(to, JSON.stringify(shiftDates(JSON.parse(readFileSync(from, "utf8")), f)));
    else writeFileSync(to, readFileSync(from));
  }
}
