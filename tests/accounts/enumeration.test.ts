import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AccountStore } from "../../src/accounts/store/port";
import { until } from "../support/wait";
import { type AuthTestApp, makeAuthApp } from "./helpers";

/**
 * POST /auth/forgot-password and /auth/resend-verification answer a registered address and an
 * unknown one with the same answer, given before the address is even looked up (the lookup and
 * the mail happen after the answer): neither the body nor the time to answer can tell whether
 * an account exists. Shown with every lookup held until the answers are in.
 */

let t: AuthTestApp;
let store: AccountStore;
beforeAll(async () => {
  t = await makeAuthApp();
  // registered, unverified: both routes have work to do for it
  await t.register("someone@example.com");
  // the service's own account store (the lookup it makes after answering)
  store = (t.deps.auth as unknown as { d: { store: AccountStore } }).d.store;
});
afterAll(() => t.close());

let ipSeq = 0;
/** a fresh client address per request (each route allows 3 per hour per address) */
const nextIp = () => `198.18.0.${++ipSeq}`;

const post = (path: string, email: string) =>
  t.req(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": nextIp() },
    body: JSON.stringify({ email }),
  });

/** what an answer shows a client: status, body and headers but the per-request ones */
async function shown(r: Response) {
  const headers = [...r.headers].filter(([k]) => !["date", "x-request-id"].includes(k));
  return { status: r.status, body: await r.text(), headers };
}

describe.each(["/auth/forgot-password", "/auth/resend-verification"])("%s", (path) => {
  test("a registered and an unknown address get the same answer before any lookup", async () => {
    const lookup = store.findByEmailIndex;
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let lookups = 0;
    store.findByEmailIndex = async (index) => {
      lookups++;
      await gate;
      return lookup.call(store, index);
    };
    try {
      const before = t.outbox().length;
      const known = await shown(await post(path, "someone@example.com"));
      const unknown = await shown(await post(path, "nobody@example.com"));
      expect(known.status).toBe(202);
      expect(unknown).toEqual(known);
      // the lookups start after the answers and are still held: nothing is mailed yet
      await until(() => lookups === 2, 4_000, "both lookups");
      expect(t.outbox().length).toBe(before);
      open();
      await t.deps.auth.settled();
      // the registered address gets its mail, the unknown one nothing
      expect(t.outbox().length).toBe(before + 1);
      expect(t.outbox().at(-1)).toContain("someone@example.com");
    } finally {
      store.findByEmailIndex = lookup;
      open();
      await t.deps.auth.settled();
    }
  });
});
