/**
 * GET /v1/brand?domain=&wait=<ms>: the first lookup of an unknown domain waits for its
 * discovery instead of answering 404 (the real app, fixture sites behind the loopback proxy).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, type TestApp, tempDir } from "../../support/app";
import { ICON_SVG } from "../../support/logo-sites";
import { until } from "../../support/wait";
import {
  bytes,
  type FixtureWeb,
  fixtureDiscoveryEnv,
  html,
  type Site,
  startFixtureWeb,
  useFixtureWeb,
} from "../../support/web-fixtures";

let web: FixtureWeb;
let t: TestApp;
let key: string;

/** names of the sites whose home page was asked for */
const visited = new Set<string>();

/** a site whose home page answers after `ms` (the fixed delay of a slow site) */
const site = (name: string, ms = 0): Site => ({
  "/": async () => {
    visited.add(name);
    if (ms) await Bun.sleep(ms);
    return new Response(
      `<title>${name}</title><link rel="icon" type="image/svg+xml" href="/i.svg"><p>${name} makes things.</p>`,
      { headers: { "content-type": "text/html" } },
    );
  },
  "/i.svg": bytes(ICON_SVG, "image/svg+xml"),
});

beforeAll(async () => {
  const sites: Record<string, Site> = {
    "waited.test": site("Waited Widgets", 300),
    "slowpoke.test": site("Slowpoke", 1500),
    "nobrand.test": { "/": html("<title>Welcome to nginx!</title>") },
  };
  for (let i = 0; i < 5; i++) sites[`busy${i}.test`] = site(`Busy ${i}`, 1200);
  web = await startFixtureWeb(sites);
  t = await makeApp(fixtureDiscoveryEnv(web, { DISCOVERY_WORKERS: "8", DATA_DIR: tempDir() }), {
    customize: useFixtureWeb(web, 3000),
  });
  key = await t.key("internal");
});
afterAll(async () => {
  await t?.close();
  await web?.stop();
});

async function timed(path: string) {
  const t0 = performance.now();
  const r = await t.get(path, key);
  const body = (await r.json()) as { name?: string; error?: string; message?: string };
  return { status: r.status, body, ms: performance.now() - t0 };
}

describe("GET /v1/brand?wait=", () => {
  test("the first lookup answers 200 once discovery has found the brand", async () => {
    const r = await timed("/v1/brand?domain=waited.test&wait=5000");
    expect(r.status).toBe(200);
    expect(r.body.name).toBe("Waited Widgets");
    expect(r.ms).toBeGreaterThanOrEqual(250);
  });

  test("a discovery that ends later than wait, or finds nothing, answers the same 404", async () => {
    const slow = await timed("/v1/brand?domain=slowpoke.test&wait=300");
    expect(slow.status).toBe(404);
    expect(slow.body.error).toBe("domain_not_found");
    expect(slow.ms).toBeGreaterThanOrEqual(280);
    expect(slow.ms).toBeLessThan(1400);
    const none = await timed("/v1/brand?domain=nobrand.test&wait=5000");
    expect(none.status).toBe(404);
    expect(none.body.error).toBe("domain_not_found");
    // tried today: nothing is queued, so nothing is waited for
    const again = await timed("/v1/brand?domain=nobrand.test&wait=5000");
    expect(again.status).toBe(404);
    expect(again.ms).toBeLessThan(250);
    await t.deps.discovery.idle();
  });

  test("at most 4 waits per key at a time: a fifth answers at once", async () => {
    const started = [0, 1, 2, 3].map((i) => timed(`/v1/brand?domain=busy${i}.test&wait=8000`));
    // each lookup holds its wait before its discovery asks the site for its home page
    await until(
      () => [0, 1, 2, 3].every((i) => visited.has(`Busy ${i}`)),
      10_000,
      "the four discoveries",
    );
    const fifth = await timed("/v1/brand?domain=busy4.test&wait=8000");
    expect(fifth.status).toBe(404);
    expect(fifth.ms).toBeLessThan(800);
    for (const r of await Promise.all(started)) {
      expect(r.status).toBe(200);
      expect(r.ms).toBeGreaterThanOrEqual(1100);
    }
    // the fifth's discovery ran anyway: a later lookup finds it
    await t.deps.discovery.idle();
    expect((await timed("/v1/brand?domain=busy4.test")).status).toBe(200);
  });

  test("wait outside 0..10000 or not an integer is a 422 validation_error", async () => {
    for (const bad of ["10001", "-1", "1.5", "soon"]) {
      const r = await timed(`/v1/brand?domain=acme.test&wait=${bad}`);
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("validation_error");
      expect(r.body.message).toMatch(/wait/);
    }
    expect((await timed("/v1/brand?domain=github.com&wait=0")).status).toBe(200);
  });

  test("the OpenAPI document names the parameter and its range", async () => {
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<string, { get: { parameters: { name: string; schema: unknown }[] } }>;
    };
    const wait = doc.paths["/v1/brand"]?.get.parameters.find((p) => p.name === "wait");
    expect(wait?.schema).toMatchObject({ minimum: 0, maximum: 10000 });
  });
});
