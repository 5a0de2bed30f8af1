/**
 * GET /v1/brand?domain=&wait=<ms>: the first lookup of an unknown domain waits for its
 * discovery instead of answering 404 (the real app, fixture sites behind the loopback proxy).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeApp, type TestApp, tempDir } from "../../support/app";
import { ManualTimers } from "../../support/clock";
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
/** the timers the lookups' waits run on: a wait runs out when the test advances them */
const timers = new ManualTimers();

/** how many times each site's home page was asked for */
const visits = new Map<string, number>();
/** the home pages held until the test opens them (a discovery still running) */
const gates = new Map<string, () => void>();
const open = (name: string) => gates.get(name)?.();

/** a site whose home page answers once the test opens its gate (`held`), or at once */
const site = (name: string, held = false): Site => {
  const opened = held ? new Promise<void>((r) => gates.set(name, r)) : null;
  return {
    "/": async () => {
      visits.set(name, (visits.get(name) ?? 0) + 1);
      await opened;
      return new Response(
        `<title>${name}</title><link rel="icon" type="image/svg+xml" href="/i.svg"><p>${name} makes things.</p>`,
        { headers: { "content-type": "text/html" } },
      );
    },
    "/i.svg": bytes(ICON_SVG, "image/svg+xml"),
  };
};

beforeAll(async () => {
  const sites: Record<string, Site> = {
    "waited.test": site("Waited Widgets", true),
    "slowpoke.test": site("Slowpoke", true),
    "nobrand.test": {
      "/": () => {
        visits.set("nobrand", (visits.get("nobrand") ?? 0) + 1);
        return html("<title>Welcome to nginx!</title>")(new Request("http://nobrand.test/"));
      },
    },
  };
  for (let i = 0; i < 5; i++) sites[`busy${i}.test`] = site(`Busy ${i}`, true);
  web = await startFixtureWeb(sites);
  // a held home page answers when the test opens it: the fetcher's timeout stays clear of that
  t = await makeApp(fixtureDiscoveryEnv(web, { DISCOVERY_WORKERS: "8", DATA_DIR: tempDir() }), {
    customize: (deps) => {
      useFixtureWeb(web, 20_000)(deps);
      deps.discovery.timers = timers;
    },
  });
  key = await t.key("internal");
});
afterAll(async () => {
  for (const release of gates.values()) release();
  await t?.close();
  await web?.stop();
});

type Answer = { status: number; body: { name?: string; error?: string; message?: string } };

/** a lookup in flight: `settled` turns true once it answered */
function lookup(path: string) {
  const state = { settled: false };
  const answer: Promise<Answer> = t.get(path, key).then(async (r) => {
    const body = (await r.json()) as Answer["body"];
    state.settled = true;
    return { status: r.status, body };
  });
  return { answer, state };
}

/** a lookup that must answer without waiting: fails if it sets a timer instead */
async function atOnce(path: string): Promise<Answer> {
  const before = timers.pending.length;
  const l = lookup(path);
  await until(() => l.state.settled || timers.pending.length > before, 10_000, "an answer");
  expect(timers.pending).toHaveLength(before);
  return l.answer;
}

describe("GET /v1/brand?wait=", () => {
  test("the first lookup answers 200 once discovery has found the brand", async () => {
    const l = lookup("/v1/brand?domain=waited.test&wait=5000");
    await until(
      () => visits.get("Waited Widgets") === 1 && timers.pending.includes(5000),
      10_000,
      "the lookup waiting while its discovery reads the site",
    );
    expect(l.state.settled).toBe(false);
    open("Waited Widgets");
    const r = await l.answer;
    expect(r.status).toBe(200);
    expect(r.body.name).toBe("Waited Widgets");
    // the wait ended with the discovery: its timer is gone
    expect(timers.pending).toEqual([]);
  });

  test("a discovery that ends later than wait, or finds nothing, answers the same 404", async () => {
    const slow = lookup("/v1/brand?domain=slowpoke.test&wait=300");
    await until(
      () => visits.get("Slowpoke") === 1 && timers.pending.includes(300),
      10_000,
      "the lookup waiting 300 ms while its discovery reads the site",
    );
    expect(slow.state.settled).toBe(false);
    // the wait runs out while the site has not answered: the 404, the discovery still running
    timers.advance(299);
    expect(timers.pending).toEqual([300]);
    timers.advance(1);
    const r = await slow.answer;
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("domain_not_found");
    expect(t.deps.discovery.stats().running).toBe(1);
    open("Slowpoke");
    await t.deps.discovery.idle();
    // it found the brand after the lookup had given up: a later lookup sees it
    expect((await atOnce("/v1/brand?domain=slowpoke.test")).body.name).toBe("Slowpoke");

    const none = lookup("/v1/brand?domain=nobrand.test&wait=5000");
    const n = await none.answer;
    expect(n.status).toBe(404);
    expect(n.body.error).toBe("domain_not_found");
    expect(visits.get("nobrand")).toBe(1);
    expect(timers.pending).toEqual([]);
    // tried today: nothing is queued, so nothing is waited for
    const again = await atOnce("/v1/brand?domain=nobrand.test&wait=5000");
    expect(again.status).toBe(404);
    expect(again.body.error).toBe("domain_not_found");
    await t.deps.discovery.idle();
    expect(visits.get("nobrand")).toBe(1);
  });

  test("at most 4 waits per key at a time: a fifth answers at once", async () => {
    const started = [0, 1, 2, 3].map((i) => lookup(`/v1/brand?domain=busy${i}.test&wait=8000`));
    // each lookup holds its wait while its discovery reads the site's home page
    await until(
      () =>
        [0, 1, 2, 3].every((i) => visits.get(`Busy ${i}`) === 1) &&
        timers.pending.filter((ms) => ms === 8000).length === 4,
      10_000,
      "the four lookups waiting on their discoveries",
    );
    const fifth = await atOnce("/v1/brand?domain=busy4.test&wait=8000");
    expect(fifth.status).toBe(404);
    expect(fifth.body.error).toBe("domain_not_found");
    expect(started.map((l) => l.state.settled)).toEqual([false, false, false, false]);
    for (let i = 0; i < 5; i++) open(`Busy ${i}`);
    for (const r of await Promise.all(started.map((l) => l.answer))) expect(r.status).toBe(200);
    expect(timers.pending).toEqual([]);
    // the fifth's discovery ran anyway: a later lookup finds it
    await t.deps.discovery.idle();
    expect((await atOnce("/v1/brand?domain=busy4.test")).status).toBe(200);
  });

  test("wait outside 0..10000 or not an integer is a 422 validation_error", async () => {
    for (const bad of ["10001", "-1", "1.5", "soon"]) {
      const r = await atOnce(`/v1/brand?domain=acme.test&wait=${bad}`);
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("validation_error");
      expect(r.body.message).toMatch(/wait/);
    }
    expect((await atOnce("/v1/brand?domain=github.com&wait=0")).status).toBe(200);
  });

  test("the OpenAPI document names the parameter and its range", async () => {
    const doc = (await (await t.req("/swagger/json")).json()) as {
      paths: Record<string, { get: { parameters: { name: string; schema: unknown }[] } }>;
    };
    const wait = doc.paths["/v1/brand"]?.get.parameters.find((p) => p.name === "wait");
    expect(wait?.schema).toMatchObject({ minimum: 0, maximum: 10000 });
  });
});
