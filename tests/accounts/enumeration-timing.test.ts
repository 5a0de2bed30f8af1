import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type AuthTestApp, makeAuthApp } from "./helpers";

/**
 * POST /auth/forgot-password and /auth/resend-verification answer a registered address and an
 * unknown one with the same body in the same time (the lookup and the mail happen after the
 * answer), so timing does not enumerate accounts. Medians of many interleaved runs, with
 * generous margins (done before answering, a registered address takes about 20 times as long:
 * 5 ms vs 0.25).
 */

setDefaultTimeout(60_000);

const RUNS = 40;
let t: AuthTestApp;
beforeAll(async () => {
  t = await makeAuthApp();
  // registered, unverified: both routes have work to do for it
  await t.register("someone@example.com");
});
afterAll(() => t.close());

let ipSeq = 0;
/** a fresh client address per request (each route allows 3 per hour per address) */
const nextIp = () => `198.18.${Math.floor(ipSeq / 250)}.${(ipSeq++ % 250) + 1}`;

async function timed(path: string, email: string): Promise<number> {
  const started = performance.now();
  const r = await t.req(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": nextIp() },
    body: JSON.stringify({ email }),
  });
  await r.text();
  const ms = performance.now() - started;
  expect(r.status).toBe(202);
  // the work done after the answer ends before the next measurement starts
  await t.deps.auth.settled();
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return ((s[(s.length - 1) >> 1] as number) + (s[s.length >> 1] as number)) / 2;
};

describe.each(["/auth/forgot-password", "/auth/resend-verification"])("%s", (path) => {
  test("the same time for a registered and an unknown address", async () => {
    // warm-up: the e-mail index secret, the compiled route
    await timed(path, "warm-up@example.com");
    await timed(path, "someone@example.com");
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      // interleaved, so drift in the machine's load hits both alike
      known.push(await timed(path, "someone@example.com"));
      unknown.push(await timed(path, `nobody-${i}@example.com`));
    }
    const k = median(known);
    const u = median(unknown);
    console.log(`${path}: median ${k.toFixed(2)} ms registered, ${u.toFixed(2)} ms unknown`);
    expect(k).toBeLessThan(u * 1.5 + 0.5);
    expect(u).toBeLessThan(k * 1.5 + 0.5);
  });

  test("the registered address still gets its mail", async () => {
    const before = t.outbox().length;
    await timed(path, "someone@example.com");
    expect(t.outbox().length).toBe(before + 1);
    expect(t.outbox().at(-1)).toContain("someone@example.com");
  });
});
