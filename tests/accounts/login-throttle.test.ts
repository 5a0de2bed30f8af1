import {
  afterAll,
  beforeAll,
  describe,
  expect,
  setDefaultTimeout,
  setSystemTime,
  test,
} from "bun:test";
import { LOGIN_CLIENT, LOGIN_PAIR } from "../../src/accounts/auth";
import { expectError } from "../support/errors";
import { type AuthTestApp, makeAuthApp, PASSWORD } from "./helpers";

/**
 * Login throttling (OWASP authentication guidance): growing delays per (address, client IP)
 * and per client IP; an account is never locked for everyone.
 */

// argon2id hashing is CPU-bound: leave room on a loaded machine
setDefaultTimeout(60_000);

let t: AuthTestApp;
beforeAll(async () => {
  t = await makeAuthApp();
});
afterAll(() => t.close());

const login = (email: string, password: string, ip: string) =>
  t.json("/auth/login", { email, password }, { headers: { "x-forwarded-for": ip } });

/** The clock `ms` later (bun:test's setSystemTime; reset with setSystemTime()). */
/** a login answered as usual: the same 401 for a wrong password and an unknown address */
const refused = (r: Response) => expectError(r, 401, "invalid_credentials");
const later = (ms: number) => setSystemTime(new Date(Date.now() + ms));

async function expectWait(r: Response, max: number) {
  expect(r.status).toBe(429);
  const body = (await r.json()) as { error: string; message: string };
  expect(body.error).toBe("rate_limit_exceeded");
  const wait = Number(r.headers.get("retry-after"));
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(max);
  expect(body.message).toContain(`Retry in ${wait} seconds`);
}

describe("per address and client IP", () => {
  test("free failures, then growing delays for that pair; the owner elsewhere logs in at once", async () => {
    const email = "throttled@example.com";
    await t.register(email);
    const attacker = "203.0.113.10";
    for (let i = 0; i < LOGIN_PAIR.free; i++)
      await refused(await login(email, `wrong ${i} password`, attacker));
    // the first failure past the free ones is answered as usual, and sets a 1 s delay
    await refused(await login(email, "wrong again pw", attacker));
    // within the delay even the right password is refused unchecked from that address...
    await expectWait(await login(email, PASSWORD, attacker), 1);
    // ...but the account is not locked: its owner, from another address, logs in
    expect((await login(email, PASSWORD, "198.51.100.200")).status).toBe(200);
    // after the delay the pair may try again; another failure doubles it (the clock is moved
    // past each delay instead of sleeping through it: the limiter reads Date.now)
    try {
      later(1100);
      await refused(await login(email, "wrong still pw", attacker));
      await expectWait(await login(email, PASSWORD, attacker), 2);
      later(2100);
      expect((await login(email, PASSWORD, attacker)).status).toBe(200);
    } finally {
      setSystemTime();
    }
  });

  test("unknown addresses are throttled the same way (the answer tells nothing)", async () => {
    const ip = "203.0.113.11";
    for (let i = 0; i <= LOGIN_PAIR.free; i++)
      await refused(await login("nobody-here@example.com", "wrong password", ip));
    await expectWait(await login("nobody-here@example.com", "wrong password", ip), 1);
  });

  test("many accounts from one client IP: growing delays for that IP only", async () => {
    await t.register("sprayed@example.com");
    const ip = "203.0.113.12";
    // one failure per address: no pair reaches its free allowance
    for (let i = 0; i < LOGIN_CLIENT.free; i++)
      await refused(await login(`guess${i}@example.com`, "password123", ip));
    await refused(await login("guess-last@example.com", "password123", ip));
    await expectWait(await login("sprayed@example.com", PASSWORD, ip), 1);
    expect((await login("sprayed@example.com", PASSWORD, "198.51.100.201")).status).toBe(200);
  });

  test("the 429 is documented on POST /auth/login", async () => {
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<string, Record<string, { description: string; responses: object }>>;
    };
    const op = doc.paths["/auth/login"]?.post;
    expect(op?.responses).toHaveProperty("429");
    expect(op?.description).toMatch(/never locked for everyone/);
  });
});
