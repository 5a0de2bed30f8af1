import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { captureLogs, setLogLevel } from "../../../src/platform/log";
import type { UsageEvent } from "../../../src/usage/event";
import { type Batch, eventsOf } from "../../../src/usage/log/batch";
import { EmbeddedUsageLog } from "../../../src/usage/log/embedded";
import { LogRecorder, type RecorderOptions } from "../../../src/usage/log/recorder";
import { readSpill } from "../../../src/usage/log/spill";
import { tempDir } from "../../support/app";
import { type Input, rec, SwitchableStore, storedEvents, until } from "../util";

const today = () => new Date().toISOString().slice(0, 10);

interface Rig<S extends SwitchableStore = SwitchableStore> {
  dir: string;
  store: S;
  writer: Rec;
  spillDir: string;
  onDisk(): UsageEvent[];
  spillFiles(): string[];
}

/** The recorder under test, recording as a metered request would (`record(over)`). */
class Rec extends LogRecorder {
  rec(over: Partial<Input> = {}) {
    return rec(this, over);
  }
}

/** The events of the spill files. */
const spilledEvents = (dir: string, files: string[]) =>
  files.flatMap((f) => readSpill(join(dir, f))).flatMap((b) => eventsOf(b));

const open: Rig[] = [];

/** a writer over the real embedded store, wrapped in a store the test can switch off (or gate) */
function rig<S extends SwitchableStore = SwitchableStore>(
  opts: Partial<RecorderOptions> = {},
  dir = tempDir("usage-w-"),
  wrap: (inner: EmbeddedUsageLog) => S = (inner) => new SwitchableStore(inner) as S,
): Rig<S> {
  const inner = EmbeddedUsageLog.open(dir);
  const store = wrap(inner);
  const spillDir = join(dir, "spill");
  const writer = new Rec(store, {
    flushMs: 60_000,
    flushEvents: 10,
    spillDir,
    backoffMinMs: 2,
    backoffMaxMs: 10,
    ...opts,
  });
  const r: Rig<S> = {
    dir,
    store,
    writer,
    spillDir,
    onDisk: () => storedEvents(inner.db, today()),
    spillFiles: () => readdirSync(spillDir).filter((f) => f.endsWith(".spill")),
  };
  open.push(r);
  return r;
}

beforeAll(() => setLogLevel("error"));
afterAll(() => setLogLevel("info"));

afterEach(async () => {
  for (const r of open.splice(0)) {
    r.store.down = false;
    await r.writer.close();
    await r.store.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

describe("LogRecorder", () => {
  test("returns before anything is written; the event's id names its batch's time, its ts and UTC day its own", async () => {
    const r = rig();
    const at = Date.parse("2025-03-04T23:59:59.999Z");
    r.writer.rec({ at });
    r.writer.rec();
    expect(r.store.batches).toEqual([]);
    expect(r.writer.stats().buffered).toBe(2);
    await r.writer.flush();
    const [late] = storedEvents(r.dir, "2025-03-04");
    expect(late).toMatchObject({ day: "2025-03-04", ts: "2025-03-04T23:59:59.999Z" });
    expect(late?.id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    // an id's first 48 bits are its batch's first time in ms: the request's, not the flush's
    expect(Number.parseInt(late?.id.replace("-", "").slice(0, 12) ?? "", 16)).toBe(at);
    expect(r.onDisk()).toHaveLength(1);
  });

  test("a batch that fails keeps its id when it is retried, and is stored once", async () => {
    const r = rig();
    const attempts: string[][] = [];
    const append = r.store.append.bind(r.store);
    r.store.append = (batches: Batch[]) => {
      attempts.push(batches.flatMap((b) => eventsOf(b).map((e) => e.id)));
      return append(batches);
    };
    r.store.down = true;
    for (let i = 0; i < 3; i++) r.writer.rec();
    await r.writer.flush();
    expect(r.writer.stats().failures).toBeGreaterThanOrEqual(1);
    r.store.down = false;
    await until(() => r.onDisk().length === 3, 4_000, "the retry");
    const ids = r.onDisk().map((e) => e.id);
    expect(new Set(ids).size).toBe(3);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const a of attempts) expect([...a].sort()).toEqual(ids);
  });

  test("writes as soon as flushEvents are recorded, not waiting for the timer", async () => {
    const r = rig({ flushEvents: 10, flushMs: 60_000 });
    for (let i = 0; i < 25; i++) r.writer.rec();
    // the write started by the full chunk takes everything recorded until it runs
    await until(() => r.writer.stats().written === 25, 4_000, "the size-triggered write");
    expect(r.store.batches.reduce((a, b) => a + b, 0)).toBe(25);
    expect(r.onDisk()).toHaveLength(25);
  });

  test("writes a partial chunk when flushMs has passed: one batch per account and day, ids in time order", async () => {
    const r = rig({ flushEvents: 1000, flushMs: 20 });
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) r.writer.rec({ at: t0 - i });
    r.writer.rec({ at: t0, accountId: "acc-2" });
    await until(() => r.store.batches.length === 1, 4_000, "the timed flush");
    expect(r.store.batches).toEqual([4]);
    const disk = r.onDisk().filter((e) => e.accountId === "acc-1");
    expect(disk.map((e) => e.day)).toEqual([today(), today(), today()]);
    expect(new Set(disk.map((e) => e.id)).size).toBe(3);
    expect(disk.every((e) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/.test(e.id))).toBe(true);
    // by id: by time within the batch
    expect(disk.map((e) => Date.parse(e.ts) - t0)).toEqual([-2, -1, 0]);
  });

  test("retries with backoff while the store is down and loses nothing", async () => {
    const r = rig({ flushEvents: 4, flushMs: 5 });
    r.store.down = true;
    for (let i = 0; i < 6; i++) r.writer.rec();
    await until(() => r.writer.stats().failures >= 3, 4_000, "three failed attempts");
    expect(r.onDisk()).toHaveLength(0);
    // nothing waits in memory while the store is down: the first failure spilled the buffer
    expect(r.writer.stats()).toMatchObject({ buffered: 0, spilled: 6 });
    r.store.down = false;
    await until(() => r.writer.stats().replayed === 6, 4_000, "the retry");
    const disk = r.onDisk();
    expect(disk).toHaveLength(6);
    expect(new Set(disk.map((e) => e.id)).size).toBe(6);
    expect(r.writer.stats()).toMatchObject({ dropped: 0, buffered: 0 });
    expect(r.spillFiles()).toEqual([]);
  });

  test("spills past the buffer bound and replays the spill file when the store returns", async () => {
    const r = rig({ flushEvents: 5, flushMs: 5, maxBuffered: 10 });
    r.store.down = true;
    for (let i = 0; i < 4; i++) r.writer.rec();
    await until(() => r.writer.stats().failures >= 1, 4_000, "a failed attempt");
    for (let i = 0; i < 23; i++) r.writer.rec();
    const s = r.writer.stats();
    expect(s.spilled).toBeGreaterThan(0);
    expect(s.buffered).toBeLessThanOrEqual(10);
    expect(s.spilled + s.buffered).toBe(27);
    // one spill file, or more when a retry (every flushMs) spilled the buffer again meanwhile:
    // every spilled event is in them
    const files = r.spillFiles();
    expect(files.length).toBeGreaterThanOrEqual(1);
    const spilled = spilledEvents(r.spillDir, files);
    expect(spilled).toHaveLength(r.writer.stats().spilled);
    r.store.down = false;
    await until(
      () => r.spillFiles().length === 0 && r.writer.stats().buffered === 0,
      4_000,
      "replay",
    );
    // the last batch leaves the buffer before its write ends: let a running drain finish
    await r.writer.flush();
    const disk = r.onDisk();
    expect(new Set(disk.map((e) => e.id)).size).toBe(27);
    expect(disk).toHaveLength(27);
    expect(r.writer.stats()).toMatchObject({ replayed: s.spilled, dropped: 0 });
  });

  test("close with the store down keeps the buffer in a spill file; the next start replays it once", async () => {
    const dir = tempDir("usage-w-");
    const first = rig({ flushEvents: 100 }, dir);
    first.store.down = true;
    for (let i = 0; i < 7; i++) first.writer.rec();
    for (let i = 0; i < 2; i++) first.writer.rec({ accountId: "acc-2" });
    await first.writer.close();
    expect(first.spillFiles()).toHaveLength(1);
    expect(first.writer.stats()).toMatchObject({ spilled: 9, dropped: 0 });
    // one of the spilled batches already reached the store before the crash: stored once
    const [name] = first.spillFiles();
    const batches = readSpill(join(first.spillDir, name as string));
    const spilled = batches.flatMap((b) => eventsOf(b));
    await first.store.inner.append([batches[0] as Batch]);
    open.splice(open.indexOf(first), 1);
    await first.store.close();

    const second = rig({ flushEvents: 100 }, dir);
    await until(() => second.spillFiles().length === 0, 4_000, "replay at start");
    const disk = second.onDisk();
    expect(disk).toHaveLength(9);
    expect(disk.map((e) => e.id).sort()).toEqual(spilled.map((e) => e.id).sort());
    expect((await second.store.daily("acc-1", today(), today()))[0]?.requests).toBe(7);
    expect((await second.store.daily("acc-2", today(), today()))[0]?.requests).toBe(2);
  });

  /** the spill directory made unusable (a file where the directory was) */
  function breakSpill(r: Rig) {
    rmSync(r.spillDir, { recursive: true });
    writeFileSync(r.spillDir, "not a directory");
  }

  test("events that can be neither written nor spilled are held in memory; degraded past maxBuffered until a write succeeds", async () => {
    const r = rig({ flushMs: 20, flushEvents: 100, maxBuffered: 3, maxHeld: 6 });
    r.store.down = true;
    breakSpill(r);
    const logs = captureLogs();
    try {
      for (let i = 0; i < 3; i++) r.writer.rec();
      expect(r.writer.condition()).toMatchObject({ state: "ok", held: 3 });
      r.writer.rec();
      expect(r.writer.condition()).toMatchObject({ state: "degraded", held: 4 });
      expect(Date.parse(r.writer.condition().since ?? "")).toBeGreaterThan(Date.now() - 5000);
      // serve (the default): past maxHeld further events are dropped, counted and logged
      for (let i = 0; i < 4; i++) r.writer.rec();
      expect(r.writer.stats()).toMatchObject({ dropped: 2, spilled: 0, buffered: 6 });
      expect(r.writer.accepting()).toBe(true);
      expect(
        logs.lines.some((l) => l.level === "error" && String(l.msg).includes("held in memory")),
      ).toBe(true);
      expect(logs.lines.find((l) => String(l.msg).includes("dropped"))).toMatchObject({
        level: "error",
        droppedTotal: 1,
      });
      // retries that find the store still down change nothing, and never claim it is back
      const refused = r.store.refused;
      await until(() => r.store.refused >= refused + 2, 4_000, "two more refused retries");
      expect(r.writer.condition().state).toBe("degraded");
      expect(logs.lines.some((l) => String(l.msg).includes("is back"))).toBe(false);
      // the store takes writes again: every held event is written, the recorder is ok
      r.store.down = false;
      await until(() => r.writer.condition().state === "ok");
      await r.writer.flush();
      expect(r.onDisk()).toHaveLength(6);
      expect(r.writer.condition()).toMatchObject({ state: "ok", since: null, held: 0 });
    } finally {
      logs.restore();
    }
    rmSync(r.spillDir);
  });

  test("USAGE_ON_STORE_FULL=refuse: at maxHeld the recorder stops accepting instead of dropping", async () => {
    const r = rig({ flushMs: 20, flushEvents: 100, maxBuffered: 2, maxHeld: 4, onFull: "refuse" });
    r.store.down = true;
    breakSpill(r);
    const logs = captureLogs();
    try {
      for (let i = 0; i < 3; i++) r.writer.rec();
      expect(r.writer.accepting()).toBe(true);
      r.writer.rec();
      expect(r.writer.accepting()).toBe(false);
      expect(r.writer.stats().dropped).toBe(0);
      r.store.down = false;
      await until(() => r.writer.accepting() && r.writer.condition().state === "ok");
      await r.writer.flush();
      expect(r.onDisk()).toHaveLength(4);
    } finally {
      logs.restore();
    }
    rmSync(r.spillDir);
  });

  test("events still unwritten at close with the disk failing and no spill reserve are counted as dropped", async () => {
    const r = rig({ flushEvents: 100, maxBuffered: 3 });
    r.store.down = true;
    breakSpill(r);
    const logs = captureLogs();
    try {
      for (let i = 0; i < 2; i++) r.writer.rec();
      open.splice(open.indexOf(r), 1);
      await r.writer.close();
      await r.store.close();
    } finally {
      logs.restore();
    }
    expect(logs.lines.find((l) => l.msg === "usage recorder closed")).toMatchObject({
      level: "error",
      dropped: 2,
    });
    rmSync(r.dir, { recursive: true, force: true });
  });

  test("events recorded after close go to a spill file, not nowhere", async () => {
    const r = rig();
    await r.writer.close();
    r.writer.rec();
    expect(r.writer.stats()).toMatchObject({ spilled: 1, dropped: 0 });
    expect(r.spillFiles()).toHaveLength(1);
  });

  test("flush writes everything buffered now", async () => {
    const r = rig({ flushEvents: 4 });
    for (let i = 0; i < 9; i++) r.writer.rec({ accountId: "acc-9" });
    await r.writer.flush();
    expect(r.onDisk()).toHaveLength(9);
    expect((await r.store.daily("acc-9", today(), today()))[0]?.requests).toBe(9);
  });
});

/** A store whose appends wait at a gate while it is shut (a slow store, a long replay). */
class GatedStore extends SwitchableStore {
  private gate: Promise<void> | null = null;
  private release: (() => void) | null = null;
  waiting = 0;
  shut() {
    this.gate = new Promise((resolve) => {
      this.release = resolve;
    });
  }
  open() {
    this.release?.();
    this.gate = null;
  }
  override async append(batches: Batch[]) {
    if (this.gate) {
      this.waiting++;
      await this.gate;
      this.waiting--;
    }
    return super.append(batches);
  }
}

describe("LogRecorder: spills and the loss bound", () => {
  const gatedRig = (opts: Partial<RecorderOptions>) =>
    rig({ flushEvents: 5, ...opts }, undefined, (inner) => new GatedStore(inner));

  test("files spilled while a replay runs are replayed by it: every event once, no restart", async () => {
    const r = gatedRig({ flushMs: 5, maxBuffered: 10, maxLagMs: 60_000 });
    r.store.down = true;
    for (let i = 0; i < 20; i++) r.writer.rec();
    await until(() => r.writer.stats().failures >= 1, 4_000, "a failed attempt");
    expect(r.writer.stats().buffered).toBe(0);
    // the store comes back slow: the replay of the first file blocks on its first batch
    r.store.shut();
    r.store.down = false;
    await until(() => r.store.waiting > 0, 4_000, "the replay to start");
    // meanwhile traffic overflows the buffer twice: more spill files, made during the replay
    for (let i = 0; i < 30; i++) r.writer.rec();
    const during = r.writer.stats();
    expect(during.spilled).toBeGreaterThanOrEqual(20 + 22);
    r.store.open();
    await until(
      () =>
        r.spillFiles().length === 0 &&
        r.writer.stats().buffered === 0 &&
        r.writer.stats().written + r.writer.stats().replayed >= 50,
      4_000,
      "every spill file replayed without a restart",
    );
    await r.writer.flush();
    const ids = r.onDisk().map((e) => e.id);
    expect(ids).toHaveLength(50);
    expect(new Set(ids).size).toBe(50);
    const s = r.writer.stats();
    expect(s.replayed).toBe(s.spilled);
    expect(s.dropped).toBe(0);
  });

  test("a file spilled by the last write of a drain is replayed without further traffic", async () => {
    const r = gatedRig({ flushMs: 5, maxBuffered: 6, maxLagMs: 60_000 });
    r.store.shut();
    for (let i = 0; i < 5; i++) r.writer.rec();
    await until(() => r.store.waiting > 0, 4_000, "the write to start");
    // the buffer overflows while the only write runs, then traffic stops
    for (let i = 0; i < 7; i++) r.writer.rec();
    expect(r.spillFiles()).toHaveLength(1);
    r.store.open();
    await until(() => r.spillFiles().length === 0, 4_000, "the replay");
    await r.writer.flush();
    expect(new Set(r.onDisk().map((e) => e.id)).size).toBe(12);
    expect(r.onDisk()).toHaveLength(12);
  });

  test("a writer that falls behind spills at once: nothing older than maxLagMs stays in memory", async () => {
    const r = gatedRig({ flushMs: 5, maxLagMs: 100 });
    r.store.shut();
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) r.writer.rec({ at: t0 });
    await until(() => r.store.waiting > 0, 4_000, "the write to start");
    r.writer.rec({ at: t0 + 10 });
    r.writer.rec({ at: t0 + 90 });
    expect(r.writer.stats()).toMatchObject({ buffered: 2, spilled: 0 });
    // an event 110 ms after the oldest waiting one: the writer is behind, the buffer goes to disk
    r.writer.rec({ at: t0 + 120 });
    expect(r.writer.stats()).toMatchObject({ buffered: 0, spilled: 3 });
    const spilled = spilledEvents(r.spillDir, r.spillFiles());
    expect(spilled.map((e) => Date.parse(e.ts) - t0)).toEqual([10, 90, 120]);
    r.store.open();
    await until(() => r.spillFiles().length === 0, 4_000, "the replay");
    await r.writer.flush();
    expect(r.onDisk()).toHaveLength(8);
    expect(new Set(r.onDisk().map((e) => e.id)).size).toBe(8);
  });

  test("a failed write sends the buffer to a spill file at once", async () => {
    const r = gatedRig({ flushEvents: 100 });
    r.store.down = true;
    for (let i = 0; i < 4; i++) r.writer.rec();
    await r.writer.flush();
    expect(r.writer.stats()).toMatchObject({ buffered: 0, spilled: 4, dropped: 0 });
    expect(r.spillFiles()).toHaveLength(1);
    r.store.down = false;
    await until(() => r.spillFiles().length === 0, 4_000, "the retry");
    expect(r.onDisk()).toHaveLength(4);
  });
});

describe("LogRecorder: 429 refusals folded per key, bucket and second", () => {
  test("one event per key, bucket and second with its count; analytics counts every refusal", async () => {
    const r = rig({ flushEvents: 100 });
    const t0 = Math.floor(Date.now() / 1000) * 1000;
    for (let i = 0; i < 5; i++) r.writer.rec({ at: t0 + i, status: 429, keyId: "k1" });
    r.writer.rec({ at: t0 + 10, status: 429, keyId: "k1", bucket: "png" });
    r.writer.rec({ at: t0 + 20, status: 429, keyId: "k2" });
    r.writer.rec({ at: t0 + 30, status: 200, keyId: "k1" });
    // the next second: a new folded event for k1/svg
    r.writer.rec({ at: t0 + 1000, status: 429, keyId: "k1" });
    r.writer.rec({ at: t0 + 1001, status: 429, keyId: "k1" });
    await r.writer.flush();
    const disk = r.onDisk();
    expect(disk).toHaveLength(5);
    const refusals = disk.filter((e) => e.status === 429);
    expect(
      refusals.map((e) => [e.keyId, e.bucket, Date.parse(e.ts) - t0, e.count ?? 1]).sort(),
    ).toEqual(
      [
        ["k1", "svg", 0, 5],
        ["k1", "png", 10, 1],
        ["k2", "svg", 20, 1],
        ["k1", "svg", 1000, 2],
      ].sort(),
    );
    // a single refusal carries no count field
    expect(disk.find((e) => e.keyId === "k2")).not.toHaveProperty("count");
    const day = new Date(t0).toISOString().slice(0, 10);
    const rows = await r.store.daily("acc-1", day, day);
    const svg = rows.find((x) => x.bucket === "svg");
    expect(svg).toMatchObject({ requests: 9, rateLimited: 8, errors: 0 });
    expect(rows.find((x) => x.bucket === "png")).toMatchObject({ requests: 1, rateLimited: 1 });
    // the projection rebuilt from the log agrees
    await r.store.rebuild();
    expect((await r.store.daily("acc-1", day, day)).find((x) => x.bucket === "svg")).toMatchObject({
      requests: 9,
      rateLimited: 8,
    });
  });

  test("folded refusals are written with their chunk, without further traffic", async () => {
    const r = rig({ flushEvents: 100, flushMs: 5 });
    r.writer.rec({ status: 429 });
    r.writer.rec({ status: 429 });
    await until(() => r.onDisk().length > 0, 4_000, "the fold to be released");
    expect(r.onDisk().reduce((n, e) => n + (e.count ?? 1), 0)).toBe(2);
  });
});

describe("LogRecorder: USAGE_DURABILITY=strict", () => {
  test("record resolves once its event is written (group commit, not after flushMs); 429s are not waited for", async () => {
    const r = rig({ durability: "strict", flushMs: 60_000, flushEvents: 500 });
    const waits = Array.from({ length: 20 }, () => r.writer.rec());
    expect(waits.every((w) => w instanceof Promise)).toBe(true);
    expect(r.onDisk()).toHaveLength(0);
    // resolved by the group commit: waiting for flushMs (60 s) would outlast the test's timeout
    await Promise.all(waits);
    expect(r.onDisk()).toHaveLength(20);
    // one group for the 20 that arrived together
    expect(r.store.batches).toEqual([20]);
    expect(r.writer.rec({ status: 429 })).toBeUndefined();
  });

  test("store down: requests after the first failure are answered from a spill file at once, not after the next retry", async () => {
    // a retry a minute away: waiting for it would outlast the test's timeout
    const r = rig({ durability: "strict", backoffMinMs: 60_000, backoffMaxMs: 60_000 });
    r.store.down = true;
    await r.writer.rec(); // the write fails: the store is down from now on
    const later = Array.from({ length: 5 }, () => r.writer.rec());
    await Promise.all(later);
    expect(spilledEvents(r.spillDir, r.spillFiles())).toHaveLength(6);
    expect(r.onDisk()).toHaveLength(0);
  });

  test("store down: resolves once the event is in a spill file; dropped: rejects", async () => {
    const r = rig({ durability: "strict" });
    r.store.down = true;
    await r.writer.rec();
    expect(spilledEvents(r.spillDir, r.spillFiles())).toHaveLength(1);
    // neither store nor spill file: held up to maxHeld (waiting), then dropped (rejected)
    const h = rig({ durability: "strict", flushMs: 20, maxBuffered: 2, maxHeld: 3 });
    h.store.down = true;
    rmSync(h.spillDir, { recursive: true });
    writeFileSync(h.spillDir, "not a directory");
    // each event its own chunk: each strict caller waits for its own
    const held: (Promise<void> | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      held.push(h.writer.rec());
      await h.writer.flush();
    }
    expect(
      await held[3]?.then(
        () => "kept",
        (e: Error) => e.message,
      ),
    ).toContain("dropped");
    rmSync(h.spillDir);
    h.store.down = false;
    await Promise.all(held.slice(0, 3));
    expect(h.onDisk()).toHaveLength(3);
  });
});
