import { afterAll, beforeAll, expect, test } from "bun:test";
import { createEnterprise, makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";
import { accountEvents } from "./util";

/** A capped key hammering a route: each refusal counts in analytics, the log holds few events. */
let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

test("429 refusals reach the log folded per key, bucket and second, and all count", async () => {
  const acct = await createEnterprise(t, { catalog: 1 });
  expect((await t.get("/v1/catalog/github", acct.apiKey)).status).toBe(200);
  for (let i = 0; i < 40; i++)
    await expectError(await t.get("/v1/catalog/github", acct.apiKey), 429, "rate_limit_exceeded");
  await t.deps.usage.flush();
  const today = new Date().toISOString().slice(0, 10);
  const events = await accountEvents(t.deps.store.usage, acct.accountId, today);
  const refusals = events.filter((e) => e.status === 429);
  expect(refusals.reduce((n, e) => n + (e.count ?? 1), 0)).toBe(40);
  // 40 refusals within a second or two of each other: a handful of events, not 40
  expect(refusals.length).toBeLessThan(10);
  const r = await t.get(
    `/v1/analytics/usage?from=${today}&to=${today}&bucket=catalog`,
    acct.apiKey,
  );
  expect(r.status).toBe(200);
  const body = (await r.json()) as {
    totals: Record<string, { requests: number; rateLimited: number }>;
  };
  expect(body.totals.catalog).toMatchObject({ requests: 41, rateLimited: 40 });
});
