import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BUCKETS } from "../../../src/quota/limits";
import { ADMIN_TOKEN, makeApp, type TestApp, useAccountIdBearer } from "../../support/app";
import { settle } from "../util";

/** GET /v1/analytics/usage through the real app (embedded store, real catalog). */
let t: TestApp;
beforeAll(async () => {
  t = await makeApp({}, { customize: useAccountIdBearer });
});
afterAll(async () => {
  await t.close();
});

interface Counts {
  requests: number;
  errors: number;
  rateLimited: number;
}
interface History {
  tier: string;
  from: string;
  to: string;
  bucket: string | null;
  days: { date: string; buckets: Record<string, Counts> }[];
  totals: Record<string, Counts>;
}

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const today = () => iso(Date.now());
const zero: Counts = { requests: 0, errors: 0, rateLimited: 0 };

async function account(tier = "free") {
  const r = await t.req("/admin/keys", {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ tier }),
  });
  return (await r.json()) as { accountId: string; keyId: string; apiKey: string };
}

/** metered requests made with valid credentials (each records one usage event) */
let metered = 0;
const mget = (path: string, key: string) => {
  metered++;
  return t.get(path, key);
};
const mpost = (path: string, key: string, body: unknown) => {
  metered++;
  return t.post(path, key, body);
};
const settled = () => settle(t.deps.usage, metered);

async function history(key: string, query = "") {
  const r = await t.get(`/v1/analytics/usage${query}`, key);
  expect(r.status).toBe(200);
  return (await r.json()) as History;
}

/** 3 catalog hits (one 404) and 6 batch calls on the free tier (the 6th is refused: 429). */
async function traffic(key: string) {
  const slugs = ["github", "gitlab", "no-such-brand-xyz"];
  const statuses: number[] = [];
  for (const s of slugs) statuses.push((await mget(`/v1/catalog/${s}`, key)).status);
  for (let i = 0; i < 6; i++)
    statuses.push((await mpost("/v1/catalog/batch", key, { slugs: ["github"] })).status);
  expect(statuses).toEqual([200, 200, 404, 200, 200, 200, 200, 200, 429]);
  await settled();
}

describe("GET /v1/analytics/usage", () => {
  test("defaults to the 30 days ending today, zero-filled, every bucket", async () => {
    const a = await account("pro");
    const h = await history(a.apiKey);
    expect(h.tier).toBe("pro");
    expect(h.to).toBe(today());
    expect(h.from).toBe(iso(Date.now() - 29 * DAY));
    expect(h.bucket).toBeNull();
    expect(h.days).toHaveLength(30);
    expect(h.days[0]?.date).toBe(h.from);
    expect(h.days.at(-1)?.date).toBe(h.to);
    for (const d of h.days)
      expect(d.buckets).toEqual(Object.fromEntries(BUCKETS.map((b) => [b, zero])));
    expect(h.totals).toEqual(Object.fromEntries(BUCKETS.map((b) => [b, zero])));
  });

  test("counts the account's metered requests per bucket: errors and 429 refusals apart", async () => {
    const a = await account("free");
    await traffic(a.apiKey);
    const h = await history(a.apiKey);
    const day = h.days.find((d) => d.date === today());
    expect(day?.buckets.catalog).toEqual({ requests: 3, errors: 1, rateLimited: 0 });
    expect(day?.buckets.batch).toEqual({ requests: 6, errors: 0, rateLimited: 1 });
    expect(day?.buckets.svg).toEqual(zero);
    expect(h.totals.catalog).toEqual({ requests: 3, errors: 1, rateLimited: 0 });
    expect(h.totals.batch).toEqual({ requests: 6, errors: 0, rateLimited: 1 });
    for (const d of h.days.filter((x) => x.date !== today()))
      expect(Object.values(d.buckets).every((c) => c.requests === 0)).toBe(true);
  });

  test("an explicit range lists every day of it; past days are zero", async () => {
    const a = await account();
    await traffic(a.apiKey);
    const h = await history(a.apiKey, "?from=2024-02-27&to=2024-03-02");
    expect(h.days.map((d) => d.date)).toEqual([
      "2024-02-27",
      "2024-02-28",
      "2024-02-29",
      "2024-03-01",
      "2024-03-02",
    ]);
    expect(h.totals.batch).toEqual(zero);
    const one = await history(a.apiKey, `?from=${today()}&to=${today()}`);
    expect(one.days).toHaveLength(1);
    expect(one.totals.batch?.requests).toBe(6);
    // only `to`: the 30 days ending there
    const only = await history(a.apiKey, "?to=2024-03-30");
    expect([only.from, only.to, only.days.length]).toEqual(["2024-03-01", "2024-03-30", 30]);
  });

  test("366 days is the longest range", async () => {
    const a = await account();
    const h = await history(a.apiKey, "?from=2024-01-01&to=2024-12-31");
    expect(h.days).toHaveLength(366);
    const r = await t.get("/v1/analytics/usage?from=2024-01-01&to=2025-01-01", a.apiKey);
    expect(r.status).toBe(422);
    expect(await r.json()).toEqual({
      error: "validation_error",
      message: "Invalid date range: 367 days requested, at most 366 per call",
    });
  });

  test("years 0-99 are read as written, not as 1900-1999", async () => {
    const a = await account();
    const h = await history(a.apiKey, "?from=0050-02-27&to=0050-03-01");
    expect([h.from, h.to, h.days.map((d) => d.date)]).toEqual([
      "0050-02-27",
      "0050-03-01",
      ["0050-02-27", "0050-02-28", "0050-03-01"],
    ]);
  });

  test.each([
    ["?from=2025-03-02&to=2025-03-01", "to (2025-03-01) is before from (2025-03-02)"],
    ["?from=2025-02-30", "from"],
    ["?to=2025-13-01", "to"],
    ["?from=2025-1-1", "from"],
    ["?to=yesterday", "to"],
    ["?bucket=pdf", "bucket"],
    ["?from=2000-01-01", "days requested"],
  ])("%s is 422 validation_error naming the problem", async (query, named) => {
    const a = await account();
    const r = await t.get(`/v1/analytics/usage${query}`, a.apiKey);
    expect(r.status).toBe(422);
    const body = (await r.json()) as { error: string; message: string };
    expect(body.error).toBe("validation_error");
    expect(body.message).toContain(named);
  });

  test("bucket= lists only that bucket", async () => {
    const a = await account();
    await traffic(a.apiKey);
    const h = await history(a.apiKey, "?bucket=batch");
    expect(h.bucket).toBe("batch");
    expect(Object.keys(h.totals)).toEqual(["batch"]);
    expect(h.totals.batch).toEqual({ requests: 6, errors: 0, rateLimited: 1 });
    for (const d of h.days) expect(Object.keys(d.buckets)).toEqual(["batch"]);
  });

  test("an account sees only its own usage", async () => {
    const a = await account();
    const b = await account();
    await traffic(a.apiKey);
    const hb = await history(b.apiKey);
    expect(hb.totals).toEqual(Object.fromEntries(BUCKETS.map((x) => [x, zero])));
    expect((await history(a.apiKey)).totals.catalog?.requests).toBe(3);
  });

  test("all keys of the account count, revoked ones included; a bearer token sees the same", async () => {
    const a = await account("pro");
    for (let i = 0; i < 2; i++)
      expect((await mget("/v1/catalog/github", a.apiKey)).status).toBe(200);
    const regen = await t.req(`/admin/accounts/${a.accountId}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(regen.status).toBe(201);
    const { apiKey } = (await regen.json()) as { apiKey: string };
    expect((await t.get("/v1/catalog/github", a.apiKey)).status).toBe(401);
    expect((await mget("/v1/catalog/gitlab", apiKey)).status).toBe(200);
    await settled();
    expect((await history(apiKey)).totals.catalog).toEqual({
      requests: 3,
      errors: 0,
      rateLimited: 0,
    });
    const bearer = await t.req("/v1/analytics/usage", {
      headers: { authorization: `Bearer acct:${a.accountId}` },
    });
    expect(bearer.status).toBe(200);
    expect(((await bearer.json()) as History).totals.catalog?.requests).toBe(3);
  });

  test("needs credentials; consumes no quota bucket", async () => {
    expect((await t.req("/v1/analytics/usage")).status).toBe(401);
    const a = await account();
    await traffic(a.apiKey);
    const before = await (await t.get("/v1/usage", a.apiKey)).json();
    for (let i = 0; i < 3; i++) await history(a.apiKey);
    await settled();
    expect(await (await t.get("/v1/usage", a.apiKey)).json()).toEqual(before);
    expect((await history(a.apiKey)).totals.catalog?.requests).toBe(3);
  });

  test("at most 60 calls per minute per account", async () => {
    const a = await account();
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++)
      statuses.push((await t.get("/v1/analytics/usage?bucket=svg", a.apiKey)).status);
    // a minute boundary may fall inside the loop: then the budget restarts and all pass
    const refused = statuses.filter((s) => s === 429).length;
    expect(statuses.slice(0, 59).every((s) => s === 200)).toBe(true);
    expect(refused <= 1).toBe(true);
    if (refused) {
      const r = await t.get("/v1/analytics/usage", a.apiKey);
      expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(((await r.json()) as { error: string }).error).toBe("rate_limit_exceeded");
    }
  });

  test("is documented in the OpenAPI document", async () => {
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, unknown>; summary: string }>
      >;
    };
    const op = doc.paths["/v1/analytics/usage"]?.get;
    expect(op?.summary).toBeTruthy();
    expect(Object.keys(op?.responses ?? {}).sort()).toEqual([
      "200",
      "401",
      "414",
      "422",
      "429",
      "431",
      "500",
      "503",
    ]);
  });
});
