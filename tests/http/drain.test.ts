import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { DRAIN_HOLD_MS, Drain } from "../../src/http/drain";
import { tempDir } from "../support/app";
import { ManualTimers } from "../support/clock";
import { adminKey, startService } from "../support/service";
import { until } from "../support/wait";
import { storedEvents } from "../usage/util";

/**
 * Graceful drain of the real entry point (`bun src/main.ts`): continuous load on 64 keep-alive
 * connections through SIGTERM loses no request, /readyz says 503 first, every event is flushed.
 */

setDefaultTimeout(90_000);
const CONNECTIONS = 64;
const dataDir = tempDir("drain-");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Outcome {
  statuses: Record<number, number>;
  /** answers that carried Connection: close (then the client closed the connection) */
  closes: number;
  /** ECONNRESET / EPIPE */
  resets: number;
  /** the connection closed while a request on it waited for its answer */
  lostInFlight: number;
  /** new connections refused once the listener had closed */
  refused: number;
  other: string[];
}

const outcome = (): Outcome => ({
  statuses: {},
  closes: 0,
  resets: 0,
  lostInFlight: 0,
  refused: 0,
  other: [],
});

/**
 * One keep-alive HTTP/1.1 connection sending `path` back to back (the next request as soon as
 * an answer is complete) until the server closes it with Connection: close, or `stop()`.
 */
function keepAlive(
  port: number,
  path: string,
  headers: string,
  out: Outcome,
  onAnswer: (status: number, head: string, body: string) => void = () => {},
  stopped: () => boolean = () => false,
): Promise<"closed" | "refused" | "stopped" | "failed"> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, "127.0.0.1");
    let buffer = Buffer.alloc(0);
    let waiting = false;
    let settled = false;
    const done = (how: "closed" | "refused" | "stopped" | "failed") => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(how);
    };
    const send = () => {
      if (stopped()) return done("stopped");
      waiting = true;
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`);
    };
    socket.on("connect", send);
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString("latin1");
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        const body = buffer.subarray(end + 4, end + 4 + length).toString();
        buffer = buffer.subarray(end + 4 + length);
        waiting = false;
        const status = Number(head.split(" ")[1]);
        out.statuses[status] = (out.statuses[status] ?? 0) + 1;
        onAnswer(status, head, body);
        if (/\r\nconnection: *close/i.test(head)) {
          out.closes++;
          return done("closed");
        }
        send();
      }
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNREFUSED") {
        out.refused++;
        return done("refused");
      }
      if (err.code === "ECONNRESET" || err.code === "EPIPE") out.resets++;
      else out.other.push(String(err.code ?? err.message));
      done("failed");
    });
    socket.on("close", () => {
      if (waiting && !settled) out.lostInFlight++;
      done("failed");
    });
  });
}

test("SIGTERM under load on 64 keep-alive connections: no reset, no lost request, events flushed", async () => {
  const { base, port, proc } = await startService({
    dataDir,
    env: {
      LOG_LEVEL: "info",
      // only the shutdown flush can write the events
      USAGE_FLUSH_MS: "60000",
      USAGE_FLUSH_EVENTS: "100000",
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const { accountId, apiKey } = await adminKey(base, "internal");

  const load = outcome();
  // each worker keeps one connection busy; once the server closes it, the worker connects
  // again, which the closed listener refuses (a refusal loses nothing: no request was sent)
  let signalled = false;
  const worker = async () => {
    for (;;) {
      const how = await keepAlive(port, "/v1/svg/github", `X-API-Key: ${apiKey}\r\n`, load);
      if (how === "refused" || how === "failed") return how;
    }
  };
  const workers = Array.from({ length: CONNECTIONS }, worker);

  // a probe on its own keep-alive connection, as a load balancer's health check
  const probe = outcome();
  const readiness: { status: number; draining: boolean; close: boolean }[] = [];
  const probing = (async () => {
    while (!signalled || readiness.at(-1)?.status !== 503) {
      const how = await keepAlive(port, "/readyz", "", probe, (status, head, body) => {
        readiness.push({
          status,
          draining: (JSON.parse(body) as { draining: boolean }).draining,
          close: /\r\nconnection: *close/i.test(head),
        });
      });
      if (how !== "closed") return;
    }
  })();

  // under load until more than 100 requests were served (at most 10 s), then the signal
  const loadedBy = Date.now() + 10_000;
  while ((load.statuses[200] ?? 0) <= 100 && Date.now() < loadedBy) await Bun.sleep(20);
  const servedBefore = load.statuses[200] ?? 0;
  expect(servedBefore).toBeGreaterThan(100);
  signalled = true;
  proc.kill("SIGTERM");
  const ends = await Promise.all(workers);
  await probing;
  // within the grace period: past it the remaining connections would be cut (resets), and a
  // drain that never ended would outlast the test's timeout
  const code = await proc.exited;

  // every request sent was answered, 200, and every connection was closed by its last answer
  expect(load.resets).toBe(0);
  expect(load.lostInFlight).toBe(0);
  expect(load.other).toEqual([]);
  expect(Object.keys(load.statuses)).toEqual(["200"]);
  expect(ends.every((how) => how === "refused")).toBe(true);
  expect(load.closes).toBeGreaterThanOrEqual(CONNECTIONS);
  expect(code).toBe(0);

  // the probe saw ready, then 503 draining on the same connection, closed after that answer
  expect(readiness[0]).toEqual({ status: 200, draining: false, close: false });
  expect(readiness.at(-1)).toEqual({ status: 503, draining: true, close: true });
  expect(probe.resets + probe.lostInFlight).toBe(0);

  // every answered metered request has its usage event on disk (the shutdown flush wrote them)
  const events = storedEvents(dataDir);
  expect(events.filter((e) => e.accountId === accountId)).toHaveLength(load.statuses[200] ?? -1);

  const logs = await new Response(proc.stdout as ReadableStream).text();
  expect(logs).toMatch(/"msg":"shut down","outcome":"drained"/);
});

describe("Drain", () => {
  const listener = (stop: Promise<void>) => {
    const calls: string[] = [];
    return {
      calls,
      stop: () => {
        calls.push("stop");
        return stop;
      },
      forceStop: () => {
        calls.push("force");
      },
    };
  };

  test("answers pass through untouched until the drain starts, then close their connection", async () => {
    const drain = new Drain();
    const plain = drain.respond(new Request("http://x/v1/catalog"), () => new Response("a"));
    expect((plain as Response).headers.get("connection")).toBeNull();
    const l = listener(Promise.resolve());
    const running = drain.run(l, 5_000, async () => {});
    expect(drain.draining).toBe(true);
    // a probe is answered at once; other requests wait for the listener to close
    const probe = await drain.respond(new Request("http://x/readyz"), () => new Response("p"));
    expect(probe.headers.get("connection")).toBe("close");
    expect(l.calls).toEqual([]);
    // a response with immutable headers is copied
    const fetched = await drain.respond(new Request("http://x/v1/svg/a"), () =>
      Response.redirect("http://x/elsewhere", 302),
    );
    expect(l.calls).toEqual(["stop"]);
    expect(fetched.status).toBe(302);
    expect(fetched.headers.get("connection")).toBe("close");
    expect(fetched.headers.get("location")).toBe("http://x/elsewhere");
    expect(await running).toBe("drained");
  });

  test("past the grace period the remaining connections are cut, then the stores closed", async () => {
    const timers = new ManualTimers();
    const drain = new Drain(timers);
    const l = listener(new Promise(() => {}));
    let closed = false;
    const running = drain.run(l, 400, async () => {
      closed = true;
    });
    // the hold, then the listener stops
    timers.advance(DRAIN_HOLD_MS);
    await until(() => l.calls.length > 0, 4_000, "the listener stopped");
    expect(l.calls).toEqual(["stop"]);
    // a connection still open just before the grace period ends is not cut yet
    timers.advance(400 - DRAIN_HOLD_MS - 1);
    await Bun.sleep(1);
    expect(l.calls).toEqual(["stop"]);
    expect(closed).toBe(false);
    timers.advance(1);
    expect(await running).toBe("forced");
    expect(l.calls).toEqual(["stop", "force"]);
    expect(closed).toBe(true);
    expect(timers.pending).toEqual([]);
  });
});
