import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sha256Hex } from "../../src/platform/hash";
import { expectError } from "../support/errors";
import { type AuthTestApp, makeAuthApp, PASSWORD } from "./helpers";

// argon2id hashing is CPU-bound: leave room on a loaded machine
setDefaultTimeout(30_000);

let t: AuthTestApp;
beforeAll(async () => {
  t = await makeAuthApp();
});
afterAll(() => t.close());

const body = async (r: Response) => (await r.json()) as { error: string; message: string };
const fromIp = (ip: string) => ({ headers: { "x-forwarded-for": ip } });

describe("POST /auth/register", () => {
  test("an address already registered (any case) is 409 email_taken", async () => {
    await t.register("taken@example.com");
    const r = await t.json("/auth/register", { email: "TAKEN@Example.COM", password: PASSWORD });
    expect(r.status).toBe(409);
    expect((await body(r)).error).toBe("email_taken");
  });

  test("a malformed address, a short or long password: 422 validation_error naming the field", async () => {
    const cases: [unknown, string][] = [
      [{ email: "not-an-address", password: PASSWORD }, "email"],
      [{ email: "a@b", password: PASSWORD }, "email"],
      [{ password: PASSWORD }, "email"],
      [{ email: "short@example.com", password: "123456789" }, "password"],
      [{ email: "long@example.com", password: "x".repeat(257) }, "password"],
      [{ email: "none@example.com" }, "password"],
    ];
    for (const [payload, field] of cases) {
      const r = await t.json("/auth/register", payload);
      expect(r.status).toBe(422);
      const b = await body(r);
      expect(b.error).toBe("validation_error");
      expect(b.message).toContain(field);
    }
    // the limits are inclusive
    expect(
      (await t.json("/auth/register", { email: "ten@example.com", password: "x".repeat(10) }))
        .status,
    ).toBe(201);
    expect(
      (await t.json("/auth/register", { email: "max@example.com", password: "y".repeat(256) }))
        .status,
    ).toBe(201);
  });

  test("a body over 64 KiB is 413 payload_too_large, before it is read", async () => {
    const big = JSON.stringify({ email: "a@b.test", password: "x".repeat(70_000) });
    const r = await t.json("/auth/login", big, {
      headers: { "content-length": String(Buffer.byteLength(big)) },
    });
    expect(r.status).toBe(413);
    expect((await body(r)).error).toBe("payload_too_large");
  });

  test("malformed JSON is 422, not 500", async () => {
    await expectError(
      await t.json("/auth/register", "{nope"),
      422,
      "validation_error",
      "not valid JSON",
    );
  });

  test("at most 10 registrations per client IP per hour, then 429 with Retry-After", async () => {
    const ip = "203.0.113.10";
    for (let i = 0; i < 10; i++) {
      const r = await t.json(
        "/auth/register",
        { email: `burst${i}@example.com`, password: PASSWORD },
        fromIp(ip),
      );
      expect(r.status).toBe(201);
    }
    const r = await t.json(
      "/auth/register",
      { email: "burst10@example.com", password: PASSWORD },
      fromIp(ip),
    );
    expect(r.status).toBe(429);
    expect((await body(r)).error).toBe("rate_limit_exceeded");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    // another client is not affected
    expect(
      (await t.json("/auth/register", { email: "burst10@example.com", password: PASSWORD })).status,
    ).toBe(201);
  });
});

describe("POST /auth/login", () => {
  test("a wrong password and an unknown address get the same 401 invalid_credentials", async () => {
    await t.register("login@example.com");
    const wrong = await t.json("/auth/login", {
      email: "login@example.com",
      password: "wrong password!",
    });
    const unknown = await t.json("/auth/login", {
      email: "nobody@example.com",
      password: PASSWORD,
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(await body(wrong)).toEqual(await body(unknown));
  });

  test("about the same time for both (an unknown address still costs a password hash)", async () => {
    const time = async (email: string) => {
      const started = performance.now();
      await t.json("/auth/login", { email, password: "wrong password!" });
      return performance.now() - started;
    };
    await time("nobody2@example.com"); // the dummy hash is made once
    const known: number[] = [];
    const unknown: number[] = [];
    // five of each, interleaved: one slow hash on a loaded machine does not move the median
    for (let i = 0; i < 5; i++) {
      known.push(await time("login@example.com"));
      unknown.push(await time(`nobody-${i}@example.com`));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[2] as number;
    // both verify one argon2id hash (tens of ms); without the dummy an unknown address takes ~1 ms
    expect(median(unknown)).toBeGreaterThan(median(known) / 4);
  });
});

describe("refresh and logout", () => {
  test("an unknown or malformed refresh token is 401 invalid_token", async () => {
    const r = await t.json("/auth/refresh", { refreshToken: "brt_unknown" });
    expect(r.status).toBe(401);
    expect((await body(r)).error).toBe("invalid_token");
    await expectError(await t.json("/auth/refresh", {}), 422, "validation_error", "refreshToken");
  });

  test("an expired refresh token is refused", async () => {
    await t.register("expired-refresh@example.com");
    const pair = await t.login("expired-refresh@example.com");
    const hash = sha256Hex(pair.refreshToken);
    const record = await t.deps.store.tokens.get(hash);
    // the same record, as it will be 30 days later
    await t.deps.store.tokens.put({
      ...record!,
      hash: sha256Hex("brt_aged"),
      expiresAt: Date.now() - 1,
    });
    await expectError(
      await t.json("/auth/refresh", { refreshToken: "brt_aged" }),
      401,
      "invalid_token",
    );
    expect(record!.expiresAt - record!.createdAt).toBe(30 * 24 * 3600 * 1000);
  });

  test("logout ends the session: its refresh token no longer works; 204 for unknown tokens too", async () => {
    await t.register("logout@example.com");
    const a = await t.login("logout@example.com");
    const b = await t.login("logout@example.com");
    const out = await t.json("/auth/logout", { refreshToken: a.refreshToken });
    expect(out.status).toBe(204);
    await expectError(
      await t.json("/auth/refresh", { refreshToken: a.refreshToken }),
      401,
      "invalid_token",
    );
    // another login (another family) is untouched
    expect((await t.json("/auth/refresh", { refreshToken: b.refreshToken })).status).toBe(200);
    expect((await t.json("/auth/logout", { refreshToken: "brt_nothing" })).status).toBe(204);
  });
});

describe("verification and reset tokens", () => {
  test("unknown, used or expired verification tokens are 400 invalid_token", async () => {
    const r = await t.json("/auth/verify-email", { token: "bvt_nope" });
    expect(r.status).toBe(400);
    expect((await body(r)).error).toBe("invalid_token");
    await t.register("verify-expiry@example.com");
    const token = t.lastToken("verify-expiry@example.com", "verify-email");
    const record = await t.deps.store.tokens.get(sha256Hex(token));
    expect(record!.expiresAt - record!.createdAt).toBe(24 * 3600 * 1000);
    await t.deps.store.tokens.put({
      ...record!,
      hash: sha256Hex("bvt_old"),
      expiresAt: Date.now() - 1,
    });
    await expectError(
      await t.json("/auth/verify-email", { token: "bvt_old" }),
      400,
      "invalid_token",
    );
    // a reset token is not a verification token
    await t.json("/auth/forgot-password", { email: "verify-expiry@example.com" });
    const reset = t.lastToken("verify-expiry@example.com", "reset-password");
    await expectError(await t.json("/auth/verify-email", { token: reset }), 400, "invalid_token");
  });

  test("reset tokens expire after 1 hour and work once; the new password follows the rules", async () => {
    await t.register("reset@example.com");
    await t.json("/auth/forgot-password", { email: "reset@example.com" });
    const token = t.lastToken("reset@example.com", "reset-password");
    const record = await t.deps.store.tokens.get(sha256Hex(token));
    expect(record!.expiresAt - record!.createdAt).toBe(3600 * 1000);
    await t.deps.store.tokens.put({
      ...record!,
      hash: sha256Hex("bpr_old"),
      expiresAt: Date.now() - 1,
    });
    const expired = await t.json("/auth/reset-password", {
      token: "bpr_old",
      password: "long enough now",
    });
    expect(expired.status).toBe(400);
    expect((await body(expired)).error).toBe("invalid_token");
    const short = await t.json("/auth/reset-password", { token, password: "short" });
    await expectError(short, 422, "validation_error", "password");
    expect(
      (await t.json("/auth/reset-password", { token, password: "long enough now" })).status,
    ).toBe(200);
    await expectError(
      await t.json("/auth/reset-password", { token, password: "long enough again" }),
      400,
      "invalid_token",
    );
    expect(
      (await t.json("/auth/login", { email: "reset@example.com", password: "long enough now" }))
        .status,
    ).toBe(200);
  });

  test("resend and forgot answer 202 whether or not the address exists, and mail only real accounts", async () => {
    await t.register("exists@example.com");
    const before = t.outbox().length;
    for (const path of ["/auth/resend-verification", "/auth/forgot-password"]) {
      const known = await t.json(path, { email: "exists@example.com" });
      const unknown = await t.json(path, { email: "ghost@example.com" });
      expect(known.status).toBe(202);
      expect(unknown.status).toBe(202);
      expect(await known.json()).toEqual(await unknown.json());
    }
    const sent = t.outbox().slice(before);
    expect(sent).toHaveLength(2);
    expect(sent.every((m) => /^To: exists@example\.com\r?$/im.test(m))).toBe(true);
  });

  test("resend and forgot: at most 3 per hour per client IP (X-Forwarded-For with TRUST_PROXY)", async () => {
    for (const path of ["/auth/resend-verification", "/auth/forgot-password"]) {
      const ip = path.includes("resend") ? "192.0.2.1" : "192.0.2.2";
      for (let i = 0; i < 3; i++)
        expect((await t.json(path, { email: `x${i}@example.com` }, fromIp(ip))).status).toBe(202);
      const r = await t.json(path, { email: "x@example.com" }, fromIp(ip));
      await expectError(r, 429, "rate_limit_exceeded");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await t.json(path, { email: "x@example.com" }, fromIp("192.0.2.99"))).status).toBe(
        202,
      );
    }
  });
});

describe("bearer routes", () => {
  test("without a token, or with a refresh token as bearer: 401 invalid_api_key", async () => {
    await t.register("bearer@example.com");
    const pair = await t.login("bearer@example.com");
    for (const [method, path] of [
      ["GET", "/auth/me"],
      ["POST", "/auth/api-key/regenerate"],
      ["DELETE", "/auth/me"],
    ] as const) {
      const none = await t.req(path, {
        method,
        headers: { "content-type": "application/json" },
        body: method === "GET" ? undefined : "{}",
      });
      expect(none.status).toBe(401);
      expect((await body(none)).error).toBe("invalid_api_key");
      const wrong = await t.json(path, method === "GET" ? undefined : {}, {
        method,
        bearer: pair.refreshToken,
      });
      await expectError(wrong, 401, "invalid_api_key");
    }
  });

  test("DELETE /auth/me needs the password: 401 invalid_credentials, 422 without it", async () => {
    await t.register("keep@example.com");
    const pair = await t.login("keep@example.com");
    const wrong = await t.json(
      "/auth/me",
      { password: "not my password" },
      { method: "DELETE", bearer: pair.accessToken },
    );
    expect(wrong.status).toBe(401);
    expect((await body(wrong)).error).toBe("invalid_credentials");
    const missing = await t.json("/auth/me", {}, { method: "DELETE", bearer: pair.accessToken });
    await expectError(missing, 422, "validation_error", "password");
    expect((await t.bearer("/auth/me", pair.accessToken)).status).toBe(200);
  });
});
