import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { LogRecorder } from "../../src/usage/log/recorder";
import { createEnterprise, makeApp, type TestApp } from "../support/app";
import { expectError } from "../support/errors";
import { accountEvents, settle } from "./util";

/** The usage event each metered request leaves, through the real app and embedded log. */
let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(async () => {
  await t.close();
});

const recorded = () => (t.deps.usage as LogRecorder).stats().recorded;

describe("metered requests and their usage events", () => {
  test("one event per outcome (200, 304, 404, 429) with the status the client got; none for 401 or 422", async () => {
    const { accountId, apiKey } = await createEnterprise(t, { svg: 3 });
    const before = recorded();
    const t0 = Date.now();

    const ok = await t.get("/v1/svg/github?variant=color", apiKey);
    expect(ok.status).toBe(200);
    const etag = ok.headers.get("etag") as string;
    // recorded before the response was handed back: nothing waits for a later hook
    expect(recorded()).toBe(before + 1);
    const again = await t.get("/v1/svg/github?variant=color", apiKey, { "if-none-match": etag });
    expect(again.status).toBe(304);
    await expectError(await t.get("/v1/svg/not-a-brand-xyz", apiKey), 404, "service_not_found");
    await expectError(
      await t.get("/v1/svg/github?variant=bogus", apiKey),
      422,
      "validation_error",
      "variant",
    );
    await expectError(
      await t.get("/v1/svg/github", "bak_0000000000000000_wrong"),
      401,
      "invalid_api_key",
    );
    await expectError(await t.get("/v1/svg/github", apiKey), 429, "rate_limit_exceeded");

    await settle(t.deps.usage, before + 4);
    expect(recorded()).toBe(before + 4);
    const day = new Date().toISOString().slice(0, 10);
    const events = await accountEvents(t.deps.store.usage, accountId, day);
    expect(events.map((e) => [e.status, e.slug, e.variant])).toEqual([
      [200, "github", "color"],
      [304, "github", "color"],
      [404, "not-a-brand-xyz", "mono"],
      [429, "github", "mono"],
    ]);
    for (const e of events) {
      expect(e).toMatchObject({ bucket: "svg", route: "/v1/svg/:slug", tier: "enterprise" });
      expect(e.day).toBe(e.ts.slice(0, 10));
      expect(Date.parse(e.ts)).toBeGreaterThanOrEqual(t0);
      expect(Date.parse(e.ts)).toBeLessThanOrEqual(Date.now());
      expect(e.latencyMs).toBeGreaterThanOrEqual(0);
    }
    // ids are unique and sort in request order
    const ids = events.map((e) => e.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
