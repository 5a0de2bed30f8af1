import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Tier } from "../../../src/quota/limits";
import { ADMIN_TOKEN, createAccount, makeApp, runAdmin, type TestApp } from "../../support/app";
import { expectError } from "../../support/errors";
import { settle } from "../util";

/**
 * GET /v1/analytics/usage (series answer), /v1/analytics/events, /v1/analytics/misses and
 * /admin/analytics/misses through the real app (embedded store, real catalog), fed by real
 * metered requests.
 */
setDefaultTimeout(60_000);

let t: TestApp;
const today = new Date().toISOString().slice(0, 10);

const account = (tier: Tier = "pro") => createAccount(t, tier);

let metered = 0;
async function hit(key: string, path: string, status: number, body?: unknown) {
  metered++;
  const r = body === undefined ? await t.get(path, key) : await t.post(path, key, body);
  expect({ path, status: r.status }).toEqual({ path, status });
}

let a: Awaited<ReturnType<typeof account>>;
let b: Awaited<ReturnType<typeof account>>;

beforeAll(async () => {
  t = await makeApp({ USAGE_EXPORT_SETTLE_MS: "0" });
  a = await account("pro");
  b = await account("pro");
  await hit(a.apiKey, "/v1/svg/github", 200);
  await hit(a.apiKey, "/v1/png/github?size=64", 200);
  await hit(a.apiKey, "/v1/svg/costco", 200); // no artwork: the placeholder
  await hit(a.apiKey, "/v1/svg/No-Such-Brand-Xyz", 404);
  await hit(a.apiKey, "/v1/brand?domain=github.com", 200);
  await hit(a.apiKey, "/v1/brand?domain=nobrand-xyz.test", 404);
  await hit(a.apiKey, "/v1/brand?email=jane.doe@nobrand-xyz.test", 404);
  await hit(a.apiKey, "/v1/search?q=zzqqxxvv", 200);
  await hit(a.apiKey, "/v1/catalog/batch", 200, { slugs: ["github", "nope-one"] });
  await hit(b.apiKey, "/v1/svg/gitlab", 200);
  await hit(b.apiKey, "/v1/brand?domain=other-miss.test", 404);
  await settle(t.deps.usage, metered);
});
afterAll(() => t.close());

interface Point {
  t: string;
  requests: number;
  errors: number;
  rateLimited: number;
  p50: number | null;
}
interface Series {
  granularity: string;
  groupBy: string[];
  totals: Point;
  series: Point[];
  groups: (Point & { id: string; other?: boolean; series: Point[] } & Record<string, unknown>)[];
}

async function usage(key: string, query: string) {
  const r = await t.get(`/v1/analytics/usage?${query}`, key);
  expect(r.status).toBe(200);
  return (await r.json()) as Series;
}

const ids = (s: Series) => Object.fromEntries(s.groups.map((g) => [g.id, g.requests]));

describe("GET /v1/analytics/usage, series answer", () => {
  test("without the new parameters the answer is the per-day history, unchanged", async () => {
    const r = (await (await t.get("/v1/analytics/usage", a.apiKey)).json()) as object;
    expect(Object.keys(r).sort()).toEqual(["bucket", "days", "from", "tier", "to", "totals"]);
    const withBucket = (await (
      await t.get("/v1/analytics/usage?bucket=svg", a.apiKey)
    ).json()) as object;
    expect(Object.keys(withBucket)).toContain("days");
  });

  test("GET /v1/brand records the brand it resolved; asset routes their format", async () => {
    const brands = await usage(a.apiKey, "group_by=bucket,brand");
    expect(ids(brands)).toMatchObject({
      "svg/github": 1,
      "png/github": 1,
      "svg/costco": 1,
      "svg/no-such-brand-xyz": 1,
      "domain/github": 1,
      "domain/(none)": 2,
      "search/(none)": 1,
      "batch/(none)": 1,
    });
    const formats = await usage(a.apiKey, "group_by=format&bucket=svg");
    expect(ids(formats)).toEqual({ svg: 3 });
    const png = await usage(a.apiKey, "group_by=format&brand=github");
    expect(ids(png)).toEqual({ "(none)": 1, png: 1, svg: 1 });
  });

  test("status classes and exact codes; totals match the history", async () => {
    const s = await usage(a.apiKey, "group_by=status_class");
    expect(ids(s)).toEqual({ "2xx": 6, "4xx": 3 });
    const codes = await usage(a.apiKey, "group_by=status&limit=1");
    expect(codes.groups.map((g) => [g.id, g.requests, g.other ?? false])).toEqual([
      ["200", 6, false],
      ["(other)", 3, true],
    ]);
    expect(s.totals).toMatchObject({ requests: 9, errors: 3, rateLimited: 0 });
    expect(s.totals.p50).toBeGreaterThan(0);
  });

  test("hourly series of today: 24 points, the traffic in the current hour", async () => {
    const s = await usage(a.apiKey, `granularity=hour&from=${today}&to=${today}`);
    expect(s.series).toHaveLength(24);
    const hour = new Date().toISOString().slice(0, 13);
    const now = s.series.find((p) => p.t === `${hour}:00:00Z`);
    // (a run that straddles the hour puts some requests in the previous one)
    expect(s.series.reduce((n, p) => n + p.requests, 0)).toBe(9);
    expect(now).toBeDefined();
  });

  test("another account's key sees only its own traffic, even when naming a foreign key", async () => {
    const mine = await usage(b.apiKey, "group_by=key");
    expect(mine.totals.requests).toBe(2);
    expect(mine.groups.map((g) => g.key)).toEqual([b.keyId]);
    const foreign = await usage(b.apiKey, `key=${a.keyId}`);
    expect(foreign.totals.requests).toBe(0);
    const filtered = await usage(a.apiKey, `key=${a.keyId}&group_by=bucket`);
    expect(filtered.totals.requests).toBe(9);
  });

  test("bad parameters: 422 validation_error in the spec's shape", async () => {
    const bad = [
      "group_by=nope",
      "group_by=bucket,brand,key",
      "group_by=bucket,bucket",
      "group_by=",
      "granularity=minute",
      "limit=0",
      "limit=101",
      "limit=abc",
      "limit=1e1",
      "key=",
      "granularity=hour&from=2025-01-01&to=2025-01-08",
      "from=2025-01-10&to=2025-01-01&group_by=bucket",
      "from=2024-01-01&to=2025-01-02&granularity=day",
      "to=2025-02-30&group_by=key",
    ];
    for (const q of bad) {
      const r = await t.get(`/v1/analytics/usage?${q}`, a.apiKey);
      const body = (await r.json()) as { error: string; message: string };
      expect({ q, status: r.status, error: body.error }).toEqual({
        q,
        status: 422,
        error: "validation_error",
      });
      expect(body.message.length).toBeGreaterThan(10);
    }
    const weekAgo = new Date(Date.parse(today) - 6 * 86_400_000).toISOString().slice(0, 10);
    const ok = await t.get(
      `/v1/analytics/usage?granularity=hour&from=${weekAgo}&to=${today}`,
      a.apiKey,
    );
    expect(ok.status).toBe(200);
    // hours are kept for USAGE_HOURLY_DAYS (90) days; older days answer per day
    const old = await t.get(
      "/v1/analytics/usage?granularity=hour&from=2025-01-01&to=2025-01-07",
      a.apiKey,
    );
    expect(old.status).toBe(422);
    expect(((await old.json()) as { message: string }).message).toContain(
      "granularity=hour covers the last 90 days",
    );
  });
});

describe("GET /v1/analytics/misses and /admin/analytics/misses", () => {
  test("the account's misses, ranked; an e-mail's local part is never stored", async () => {
    const r = await t.get("/v1/analytics/misses", a.apiKey);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { misses: { kind: string; value: string; count: number }[] };
    expect(body.misses).toEqual([
      { kind: "domain", value: "nobrand-xyz.test", count: 1 },
      { kind: "email", value: "nobrand-xyz.test", count: 1 },
      { kind: "query", value: "zzqqxxvv", count: 1 },
      { kind: "slug", value: "costco", count: 1 },
      { kind: "slug", value: "no-such-brand-xyz", count: 1 },
      { kind: "slug", value: "nope-one", count: 1 },
    ]);
    const slugs = (await (
      await t.get("/v1/analytics/misses?kind=slug&limit=1", a.apiKey)
    ).json()) as {
      misses: unknown[];
    };
    expect(slugs.misses).toEqual([{ kind: "slug", value: "costco", count: 1 }]);
    const all = await (await t.get("/v1/analytics/events", a.apiKey)).text();
    expect(all).not.toContain("jane");
    await expectError(
      await t.get("/v1/analytics/misses?kind=name", a.apiKey),
      422,
      "validation_error",
      "kind",
    );
  });

  test("operators see every account's misses; without the token: 401", async () => {
    const r = await t.req("/admin/analytics/misses?kind=domain", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { misses: { value: string }[] };
    expect(body.misses.map((m) => m.value)).toEqual(["nobrand-xyz.test", "other-miss.test"]);
    expect((await t.req("/admin/analytics/misses")).status).toBe(401);
    expect((await t.get("/admin/analytics/misses", a.apiKey)).status).toBe(401);
  });
});

describe("GET /v1/analytics/events", () => {
  test("NDJSON pages with a cursor: every event of the account once, none of another", async () => {
    const seen: { id: string; accountId: string; slug: string | null }[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const r = await t.get(
        `/v1/analytics/events?limit=4${cursor ? `&cursor=${cursor}` : ""}`,
        a.apiKey,
      );
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/x-ndjson");
      const lines = (await r.text()).split("\n").filter(Boolean);
      seen.push(...lines.map((l) => JSON.parse(l)));
      cursor = r.headers.get("x-next-cursor");
      if (!cursor) break;
      expect(lines).toHaveLength(4);
    }
    expect(seen).toHaveLength(9);
    expect(new Set(seen.map((e) => e.id)).size).toBe(9);
    expect(seen.every((e) => e.accountId === a.accountId)).toBe(true);
    expect([...seen.map((e) => e.id)].sort()).toEqual(seen.map((e) => e.id));
    expect(seen.find((e) => e.slug === "github")).toBeDefined();
  });

  test("CSV: a header and one row per event", async () => {
    const r = await t.get("/v1/analytics/events?format=csv", b.apiKey);
    expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const rows = (await r.text()).trim().split("\n");
    expect(rows[0]).toStartWith("id,ts,day,accountId,keyId");
    expect(rows).toHaveLength(3);
    expect(rows[1]).toContain(",svg,/v1/svg/:slug,gitlab,");
    expect(rows[2]).toContain("domain:other-miss.test");
  });

  test("bad parameters: 422", async () => {
    for (const q of ["cursor=abc", "format=xml", "limit=0", "limit=50001", "from=2025-13-01"]) {
      const r = await t.get(`/v1/analytics/events?${q}`, a.apiKey);
      await expectError(r, 422, "validation_error", q.split("=")[0]);
    }
    await expectError(await t.req("/v1/analytics/events"), 401, "invalid_api_key");
  });
});

describe("429 refusals", () => {
  test("a folded burst counts every refusal", async () => {
    const free = await account("free");
    // the free tier's batch bucket: 5 a day, then 429
    for (let i = 0; i < 5; i++)
      await hit(free.apiKey, "/v1/catalog/batch", 200, { slugs: ["github"] });
    for (let i = 0; i < 3; i++)
      await hit(free.apiKey, "/v1/catalog/batch", 429, { slugs: ["github"] });
    await settle(t.deps.usage, metered);
    const s = await usage(free.apiKey, "group_by=status");
    expect(ids(s)).toEqual({ "200": 5, "429": 3 });
    expect(s.totals).toMatchObject({ requests: 8, rateLimited: 3 });
    const lines = (await (await t.get("/v1/analytics/events", free.apiKey)).text())
      .split("\n")
      .filter(Boolean);
    // folded in the log (one line for refusals of the same second)
    expect(lines.length).toBeLessThan(8);
  });
});

describe("admin CLI", () => {
  const admin = (args: string[]) => runAdmin(t, args);

  test("misses --since 7d ranks every account's misses; a bad --since is refused", async () => {
    const r = await admin(["misses", "--since", "7d", "--kind", "domain"]);
    expect(r.code).toBe(0);
    const lines = r.out.trim().split("\n");
    expect(lines[0]).toContain("all accounts");
    expect(lines.slice(1).map((l) => l.trim().split(/\s+/))).toEqual([
      ["1", "domain", "nobrand-xyz.test"],
      ["1", "domain", "other-miss.test"],
    ]);
    const bad = await admin(["misses", "--since", "yesterday"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("--since");
  });

  test("projections rebuild reports progress and gives the same answers", async () => {
    const before = await usage(a.apiKey, "group_by=bucket,status");
    const r = await admin(["projections", "rebuild"]);
    expect(r.code).toBe(0);
    expect(r.err).toContain("events read");
    expect(r.out).toContain("rebuilt from");
    expect(await usage(a.apiKey, "group_by=bucket,status")).toEqual(before);
  });
});
