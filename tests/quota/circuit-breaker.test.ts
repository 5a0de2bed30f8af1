import { afterEach, beforeEach, describe, expect, setSystemTime, test } from "bun:test";
import { captureLogs } from "../../src/platform/log";
import { CircuitBreaker } from "../../src/quota/circuit-breaker";

/** Breaker and log behaviour on a fake clock (Date.now); the operations are plain promises. */
let clock = 0;
/** moves the clock on by `ms` */
const tick = (ms: number) => {
  clock += ms;
  setSystemTime(new Date(clock));
};
type LogLine = { level: string; msg: string; failures?: number };
// the log lines, kept at level info whatever LOG_LEVEL an earlier test in this process set
let logs: ReturnType<typeof captureLogs>;
beforeEach(() => {
  clock = Date.UTC(2026, 0, 1);
  setSystemTime(new Date(clock));
  logs = captureLogs();
});
afterEach(() => {
  setSystemTime();
  logs.restore();
});

const guard = () =>
  new CircuitBreaker({
    timeoutMs: 20,
    failureThreshold: 3,
    openMs: 1000,
    maxOpenMs: 4000,
    logIntervalMs: 60_000,
  });
const fail = () => Promise.reject(new Error("ECONNREFUSED"));
const warnings = () =>
  (logs.lines as (LogLine & { counterStore?: string })[])
    // the condition lines (degraded / ok) have their own test
    .filter((l) => l.level === "warn" && !l.counterStore);

describe("CircuitBreaker", () => {
  test("passes values through while the store answers", async () => {
    const g = guard();
    expect(await g.run(async () => 7)).toEqual({ ok: true, value: 7 });
    expect(g.state).toBe("closed");
  });

  test("errors and timeouts are failures, answered { ok: false }", async () => {
    const g = guard();
    expect(await g.run(fail)).toEqual({ ok: false });
    const never = new Promise<number>(() => {});
    expect(await g.run(() => never)).toEqual({ ok: false });
    expect(g.state).toBe("closed");
  });

  test("opens after consecutive failures and then skips the store entirely", async () => {
    const g = guard();
    for (let i = 0; i < 3; i++) await g.run(fail);
    expect(g.state).toBe("open");
    let calls = 0;
    const r = await g.run(async () => {
      calls++;
      return 1;
    });
    expect(r).toEqual({ ok: false });
    expect(calls).toBe(0);
  });

  test("a success in between resets the failure count", async () => {
    const g = guard();
    await g.run(fail);
    await g.run(fail);
    await g.run(async () => 1);
    await g.run(fail);
    await g.run(fail);
    expect(g.state).toBe("closed");
  });

  test("after the pause one probe goes through: success closes, failure doubles the pause", async () => {
    const g = guard();
    for (let i = 0; i < 3; i++) await g.run(fail);
    tick(1000);
    expect(g.state).toBe("half-open");
    expect(await g.run(fail)).toEqual({ ok: false });
    expect(g.state).toBe("open");
    tick(1999);
    expect(await g.run(async () => 1)).toEqual({ ok: false });
    tick(1);
    expect(await g.run(async () => 2)).toEqual({ ok: true, value: 2 });
    expect(g.state).toBe("closed");
  });

  test("only one probe at a time", async () => {
    const g = guard();
    for (let i = 0; i < 3; i++) await g.run(fail);
    tick(1000);
    let release: (v: number) => void = () => {};
    const probe = g.run(() => new Promise<number>((r) => (release = r)));
    expect(await g.run(async () => 5)).toEqual({ ok: false });
    release(9);
    expect(await probe).toEqual({ ok: true, value: 9 });
  });

  test("logs a failure once per interval, with the count, and the recovery once", async () => {
    const g = guard();
    for (let i = 0; i < 10; i++) await g.run(fail);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]?.msg).toBe("counter store unavailable; quotas fail open");
    tick(60_000);
    await g.run(fail);
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]?.failures).toBeGreaterThan(1);
    tick(2000);
    expect(await g.run(async () => 1)).toEqual({ ok: true, value: 1 });
    const infos = logs.lines as LogLine[];
    expect(infos.filter((l) => l.msg.startsWith("counter store ok"))).toHaveLength(1);
  });

  test("by default a tripped breaker probes the store every second, however long it stays down", async () => {
    const g = new CircuitBreaker({ timeoutMs: 20 });
    let calls = 0;
    const dead = () => {
      calls++;
      return fail();
    };
    for (let i = 0; i < 3; i++) await g.run(dead);
    expect(g.state).toBe("open");
    for (let second = 1; second <= 20; second++) {
      tick(999);
      await g.run(dead);
      // not yet: the pause is one second
      expect(calls).toBe(3 + second - 1);
      tick(1);
      await g.run(dead);
      expect(calls).toBe(3 + second);
    }
  });

  test("reports its condition and tells listeners of each change, once", async () => {
    const g = guard();
    const changes: { state: string; since: string | null }[] = [];
    g.onChange((c) => changes.push(c));
    expect(g.condition()).toEqual({ state: "ok", since: null });
    // a failure or two below the threshold is not an outage
    await g.run(fail);
    expect(g.condition().state).toBe("ok");
    await g.run(fail);
    await g.run(fail);
    const since = new Date(clock).toISOString();
    expect(g.condition()).toEqual({ state: "degraded", since });
    tick(1000);
    await g.run(fail);
    expect(g.condition()).toEqual({ state: "degraded", since });
    tick(5000);
    await g.run(async () => 1);
    expect(g.condition()).toEqual({ state: "ok", since: null });
    expect(changes).toEqual([
      { state: "degraded", since },
      { state: "ok", since: null },
    ]);
    const lines = logs.lines as (LogLine & { counterStore?: string })[];
    expect(lines.filter((l) => l.counterStore).map((l) => l.counterStore)).toEqual([
      "degraded",
      "ok",
    ]);
  });
});
