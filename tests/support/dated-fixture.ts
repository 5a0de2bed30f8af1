import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addDays, DAY_MS, dayStart, utcDay } from "../../src/platform/day";
import { until } from "./wait";

/**
 * A fixture recorded on one day, replayed as if it had been recorded on another (the run's
 * today unless a test names one): the day's instants moved together, so that they fall on that
 * day, keep their order and spacing, and lie in the past. Tokens it issued are as fresh as when
 * it was made, its usage events are that day's, and a day file `events/2026-11-28.jsonl` is
 * renamed to that day.
 *
 * What moves, in JSON and JSONL files and in expected answers:
 *  - a whole UTC day (`2026-11-28`), and a time at midnight UTC (`2026-11-28T00:00:00Z`, a day
 *    as a series names it): by whole days;
 *  - any other ISO time (`2026-11-28T13:35:41.378Z`) and an integer that is a time in ms since
 *    the epoch within a year of the recorded day (`createdAt`, `expiresAt`): by `offsetMs`.
 * Anything else (ids, hashes, ciphertext, counts) is copied as it is.
 */
export interface DatedFixture {
  /** the day the fixture was recorded (`YYYY-MM-DD`) */
  recordedOn: string;
  /** the day it is replayed on */
  today: string;
  /** whole days from `recordedOn` to `today` */
  days: number;
  /** what every instant moves by (ms) */
  offsetMs: number;
  /** the latest of the recorded day's instants, moved (epoch ms) */
  latest: number;
}

const DAY = /^\d{4}-\d{2}-\d{2}/;
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z)?$/;
const MIDNIGHT = /^\d{4}-\d{2}-\d{2}(T00:00(:00(\.0+)?)?Z)?$/;
const YEAR_MS = 366 * DAY_MS;

/** Every file under `dir`, as paths. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

/** The parsed values of a JSON or JSONL file (none for any other file). */
function valuesOf(path: string): unknown[] {
  const text = readFileSync(path, "utf8");
  if (path.endsWith(".jsonl"))
    return text
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));
  return path.endsWith(".json") ? [JSON.parse(text)] : [];
}

/** The instants (ms) inside `value` that fall on the day starting at `from`. */
function instantsOn(value: unknown, from: number): number[] {
  const out: number[] = [];
  const walk = (v: unknown) => {
    let t: number | null = null;
    if (typeof v === "string" && ISO.test(v) && !MIDNIGHT.test(v)) t = Date.parse(v);
    else if (typeof v === "number" && Number.isInteger(v)) t = v;
    if (t !== null && t >= from && t < from + DAY_MS) out.push(t);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return out;
}

/**
 * How to replay the fixture folder `dir`, recorded on `recordedOn`, on `today`: its instants
 * of the recorded day moved as late as they can go while staying on that day and a second in
 * the past. In the first seconds of a day they cannot all be in the past: `settled` waits.
 */
export function datedFixture(
  dir: string,
  recordedOn: string,
  today = utcDay(Date.now()),
): DatedFixture {
  const from = dayStart(recordedOn);
  const instants = filesUnder(dir).flatMap((f) => valuesOf(f).flatMap((v) => instantsOn(v, from)));
  const first = Math.min(...instants);
  const last = Math.max(...instants);
  if (!Number.isFinite(first)) throw new Error(`${dir} has no time on ${recordedOn}`);
  const start = dayStart(today);
  const earliest = start - first;
  const latest = Math.min(start + DAY_MS - 1 - last, Date.now() - 1000 - last);
  const offsetMs = Math.max(earliest, latest);
  const days = Math.round((start - from) / DAY_MS);
  return { recordedOn, today, days, offsetMs, latest: last + offsetMs };
}

/**
 * Resolves once the next UTC midnight is more than `ms` away (at once but in a day's last
 * `ms`): a test that reads "today" after dating a fixture must run within one day.
 */
export function clearOfMidnight(ms: number): Promise<void> {
  const left = () => DAY_MS - (Date.now() % DAY_MS);
  return until(() => left() > ms, ms + 10_000, "the next UTC day", 100);
}

/** Resolves once the clock has passed every instant of the fixture (at once but for a day's first seconds). */
export function settled(f: DatedFixture): Promise<void> {
  return until(() => Date.now() > f.latest, 10_000, "the fixture's last instant");
}

/** `value` with every date and time in it moved as the fixture's (see DatedFixture). */
export function shiftDates<T>(value: T, f: DatedFixture): T {
  const from = dayStart(f.recordedOn);
  const walk = (v: unknown): unknown => {
    if (typeof v === "string" && ISO.test(v)) {
      if (MIDNIGHT.test(v)) return v.replace(DAY, addDays(v.slice(0, 10), f.days));
      return new Date(Date.parse(v) + f.offsetMs).toISOString();
    }
    if (typeof v === "number" && Number.isInteger(v) && Math.abs(v - from) < YEAR_MS)
      return v + f.offsetMs;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/** A file or folder name with a leading day (`2026-11-28.jsonl`) moved by whole days. */
export const shiftName = (name: string, f: DatedFixture): string =>
  DAY.test(name) ? addDays(name.slice(0, 10), f.days) + name.slice(10) : name;

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
