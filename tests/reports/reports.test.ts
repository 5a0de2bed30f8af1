/**
 * Reports, pins and the audit trail on the embedded store, through the real app: a report
 * filed with an API key or the console's bearer token, its validation, votes and daily cap; an
 * operator accepting it with a pin fetched from a loopback https fixture site; the pinned
 * artwork served by the brand, SVG and PNG routes, across a catalog reload and a restart;
 * removing the pin restoring the catalog's artwork; pinned fields and domains.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { retiredPins, storedPins } from "../../scripts/catalog/redirects";
import type { Brand } from "../../src/catalog/built-catalog";
import type { Deps } from "../../src/deps";
import { setLogLevel } from "../../src/platform/log";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../support/app";
import { expectError } from "../support/errors";
import { ICON_SVG, logoSites, png, SCRIPTED_SVG, SSRF_DNS } from "../support/logo-sites";
import {
  type FixtureWeb,
  fixtureDiscoveryEnv,
  startFixtureWeb,
  useFixtureWeb,
} from "../support/web-fixtures";
import { fixtureFetcher, startArtworkSite } from "./fixtures";

setDefaultTimeout(60_000);
let web: FixtureWeb;
const SLUG = "github";

/** The corrections service fetches through the fixture proxy, trusting the fixture certificate. */
const useFixtureFetcher = (deps: Deps) => {
  deps.corrections.fetcher = fixtureFetcher(web);
};

beforeAll(async () => {
  setLogLevel("error");
  web = await startArtworkSite();
});
afterAll(async () => {
  await web?.stop();
  setLogLevel("info");
});

/** An app with web discovery on, reading the logo fixture sites (its own, stopped by the caller). */
async function discoveryApp() {
  const sites = await startFixtureWeb(await logoSites(), SSRF_DNS);
  // the fixture's resolver for addresses and TXT records (BIMI): no system DNS
  const t = await makeApp(fixtureDiscoveryEnv(sites, OPERATORS), {
    customize: useFixtureWeb(sites),
  });
  return { sites, t };
}

/** A named operator token (ADMIN_TOKENS): changes made with it are alice's. */
const ALICE_TOKEN = "alice-token-0123456789abcdef";
const OPERATORS = { ADMIN_TOKENS: `alice:${ALICE_TOKEN}` };

const admin = (t: TestApp, path: string, init: RequestInit = {}) =>
  t.req(path, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(init.headers ?? {}) },
  });
const adminJson = (t: TestApp, method: string, path: string, body?: unknown) =>
  admin(t, path, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${ALICE_TOKEN}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("POST /v1/reports", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeApp();
    key = await t.key("free");
  });
  afterAll(() => t.close());

  test("files a report by slug or domain; one vote per account on the same open report", async () => {
    const body = { slug: SLUG, kind: "wrong_logo", url: "https://secure.test/logo.svg" };
    const first = await t.post("/v1/reports", key, body);
    expect(first.status).toBe(202);
    const filed = (await first.json()) as { id: string; status: string; votes: number };
    expect(filed).toMatchObject({ status: "open", votes: 1, slug: SLUG, voted: true });
    const again = await t.post("/v1/reports", key, { ...body, note: "still wrong" });
    expect(await again.json()).toMatchObject({ id: filed.id, votes: 1, voted: false });
    const other = await t.post("/v1/reports", await t.key("free"), body);
    expect(await other.json()).toMatchObject({ id: filed.id, votes: 2, voted: true });
    // another kind is another report
    const outdated = await t.post("/v1/reports", key, { domain: "github.com", kind: "outdated" });
    expect(outdated.status).toBe(202);
    expect(((await outdated.json()) as { id: string }).id).not.toBe(filed.id);
    // nothing fetched
    expect(web.proxied.filter((l) => l.includes("secure.test"))).toEqual([]);
  });

  test("the console's bearer token is accepted", async () => {
    const account = await t.deps.accounts.createAccountWithKey({ tier: "free" });
    const token = await t.deps.access.sign(account.accountId, "free");
    const r = await t.req("/v1/reports", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ slug: SLUG, kind: "other", note: "from the console" }),
    });
    expect(r.status).toBe(202);
    expect(await r.json()).toMatchObject({ slug: SLUG, kind: "other", status: "open", votes: 1 });
    const none = await t.req("/v1/reports", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ slug: SLUG, kind: "other" }),
    });
    await expectError(none, 401, "invalid_api_key");
  });

  test("bad input is 400 naming the field; an unknown brand is 404", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: "wrong_logo" }, "slug"],
      [{ slug: SLUG, domain: "github.com", kind: "wrong_logo" }, "slug"],
      [{ slug: SLUG, kind: "ugly" }, "kind"],
      [{ slug: SLUG, kind: "wrong_logo", url: "http://secure.test/logo.svg" }, "url"],
      [{ slug: SLUG, kind: "wrong_logo", url: "https://127.0.0.1/logo.svg" }, "url"],
      [{ slug: SLUG, kind: "wrong_logo", url: "https://[::1]/logo.svg" }, "url"],
      [{ slug: SLUG, kind: "wrong_logo", url: "https://localhost/logo.svg" }, "url"],
      [{ slug: SLUG, kind: "wrong_logo", url: "https://10.0.0.1/logo.svg" }, "url"],
      [{ slug: SLUG, kind: "wrong_logo", note: "x".repeat(1001) }, "note"],
      [{ domain: "not a domain", kind: "wrong_logo" }, "domain"],
    ];
    for (const [body, field] of cases) {
      const r = await t.post("/v1/reports", key, body);
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ error: "invalid_report", field });
    }
    const slug = await t.post("/v1/reports", key, { slug: "no-such-brand-xyz", kind: "other" });
    expect(slug.status).toBe(404);
    const domain = await t.post("/v1/reports", key, {
      domain: "no-such-brand-xyz.example",
      kind: "other",
    });
    expect(domain.status).toBe(404);
    expect(((await domain.json()) as { error: string }).error).toBe("domain_not_found");
    const big = await t.post("/v1/reports", key, {
      slug: SLUG,
      kind: "other",
      note: "x".repeat(70_000),
    });
    expect(big.status).toBe(413);
  });

  test("a missing company by domain: in the queue with discovery off (nothing queued)", async () => {
    const r = await t.post("/v1/reports", key, {
      domain: "https://www.missing-company.example/about",
      kind: "missing_brand",
    });
    expect(r.status).toBe(202);
    const filed = (await r.json()) as { id: string };
    expect(filed).toMatchObject({
      slug: null,
      domain: "missing-company.example",
      kind: "missing_brand",
      discoveryQueued: false,
    });
    const queue = (await (await admin(t, "/admin/reports?status=open")).json()) as {
      items: { id: string; domain: string | null; brandId: number | null; brand: unknown }[];
    };
    expect(queue.items.find((i) => i.id === filed.id)).toMatchObject({
      domain: "missing-company.example",
      brandId: null,
      brand: null,
    });
    expect(
      await (await t.post("/v1/reports", key, { slug: SLUG, kind: "missing_brand" })).json(),
    ).toMatchObject({ error: "invalid_report", field: "domain" });
    expect(
      (await t.post("/v1/reports", key, { domain: "localhost", kind: "missing_brand" })).status,
    ).toBe(400);
  });

  test("20 reports per account and day, then 429 in the spec's shape", async () => {
    const k = await t.key("free");
    for (let i = 0; i < 20; i++) {
      const r = await t.post("/v1/reports", k, { slug: SLUG, kind: "other", note: `n${i}` });
      expect(r.status).toBe(202);
    }
    const over = await t.post("/v1/reports", k, { slug: SLUG, kind: "other" });
    expect(over.status).toBe(429);
    const body = (await over.json()) as Record<string, unknown>;
    expect(body.error).toBe("rate_limit_exceeded");
    expect(typeof body.reset_in_seconds).toBe("number");
    expect(over.headers.get("retry-after")).toBeTruthy();
  });
});

describe("operator review, pins and audit (embedded store)", () => {
  test("report -> accept with pin -> served everywhere, across reload and restart; unpin restores", async () => {
    const dataDir = tempDir();
    let t = await makeApp({ DATA_DIR: dataDir, ...OPERATORS }, { customize: useFixtureFetcher });
    const key = await t.key("internal");
    const before = await (await t.get(`/v1/svg/${SLUG}?variant=color`, key)).text();
    const report = (await (
      await t.post("/v1/reports", key, {
        slug: SLUG,
        kind: "wrong_logo",
        url: "https://secure.test/logo.svg",
      })
    ).json()) as { id: string };

    const queue = await admin(t, "/admin/reports?status=open");
    expect(queue.status).toBe(200);
    const items = ((await queue.json()) as { items: Record<string, unknown>[] }).items;
    expect(items[0]).toMatchObject({ id: report.id, votes: 1, status: "open" });
    const brand = items[0]?.brand as { variants: { variant: string; source: string }[] };
    expect(brand.variants.map((v) => v.variant)).toContain("color");

    const accepted = await adminJson(t, "POST", `/admin/reports/${report.id}/accept`, {
      pin: true,
    });
    expect(accepted.status).toBe(200);
    const a = (await accepted.json()) as { report: { status: string }; pin: { field: string } };
    expect(a.report.status).toBe("accepted");
    expect(a.pin.field).toBe("artwork:color");
    expect(web.proxied).toContain("CONNECT secure.test:443");
    const again = await adminJson(t, "POST", `/admin/reports/${report.id}/reject`);
    expect(again.status).toBe(409);

    const served = async (app: TestApp) => {
      const svg = await app.get(`/v1/svg/${SLUG}?variant=color`, key);
      expect(svg.status).toBe(200);
      return svg.text();
    };
    const pinned = await served(t);
    expect(pinned).not.toBe(before);
    expect(pinned).toContain("e4002b");
    // a single-colour mark: mono, dark and light derive from it
    const mono = await (await t.get(`/v1/svg/${SLUG}?variant=mono`, key)).text();
    expect(mono).toContain("#000");
    const pngR = await t.get(`/v1/png/${SLUG}?variant=color&size=64`, key);
    expect(pngR.status).toBe(200);
    expect(pngR.headers.get("content-type")).toBe("image/png");
    const view = (await (await t.get(`/v1/brand?domain=github.com`, key)).json()) as {
      artwork: { source: string }[];
    };
    expect(view.artwork.map((s) => s.source)).toContain("pin");

    // a catalog reload (a new build) keeps the pin
    await t.deps.catalog.load();
    expect(await served(t)).toBe(pinned);
    await t.deps.close();

    // a restart on the same DATA_DIR serves the pin from the store
    t = await makeApp({ DATA_DIR: dataDir, ...OPERATORS }, { customize: useFixtureFetcher });
    try {
      const key2 = await t.key("internal");
      expect(await (await t.get(`/v1/svg/${SLUG}?variant=color`, key2)).text()).toBe(pinned);
      const pins = (await (await admin(t, "/admin/pins")).json()) as {
        items: { slug: string; field: string; by: string }[];
      };
      expect(pins.items).toEqual([
        expect.objectContaining({ slug: SLUG, field: "artwork:color", by: "admin:alice" }),
      ]);
      const removed = await admin(t, `/admin/brands/${SLUG}/artwork/color`, { method: "DELETE" });
      expect(removed.status).toBe(200);
      expect(await (await t.get(`/v1/svg/${SLUG}?variant=color`, key2)).text()).toBe(before);
      expect(
        (await admin(t, `/admin/brands/${SLUG}/artwork/color`, { method: "DELETE" })).status,
      ).toBe(404);
      const audit = (await (await admin(t, `/admin/brands/${SLUG}/audit`)).json()) as {
        items: { type: string }[];
      };
      expect(audit.items.map((e) => e.type)).toEqual(["pin_removed", "report_accepted", "pin_set"]);
    } finally {
      await t.close();
    }
  });

  test("uploads: SVG and PNG pinned; script-bearing, oversize and fake PNG refused", async () => {
    const t = await makeApp(OPERATORS, { customize: useFixtureFetcher });
    try {
      const key = await t.key("internal");
      const put = (variant: string, body: BodyInit, type: string) =>
        admin(t, `/admin/brands/${SLUG}/artwork/${variant}?why=test`, {
          method: "PUT",
          headers: { "content-type": type },
          body,
        });
      const scripted = await put("color", SCRIPTED_SVG, "image/svg+xml");
      expect(scripted.status).toBe(400);
      expect(await scripted.json()).toMatchObject({ error: "invalid_pin", field: "body" });
      const huge = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><desc>${"x".repeat(1024 * 1024)}</desc><path d="M0 0h1v1z"/></svg>`;
      expect((await put("color", huge, "image/svg+xml")).status).toBe(400);
      const fake = await put("icon", "<svg/>", "image/png");
      expect(fake.status).toBe(400);
      expect(((await fake.json()) as { message: string }).message).toContain("not a PNG");
      expect(
        (await put("mono", '<svg xmlns="http://www.w3.org/2000/svg"/>', "image/svg+xml")).status,
      ).toBe(400);

      const icon = await put("icon", await png(128, "#123456"), "image/png");
      expect(icon.status).toBe(200);
      const served = await t.get(`/v1/svg/${SLUG}?variant=icon`, key);
      expect(served.headers.get("x-svg-variant")).toBe("icon");
      expect(await served.text()).toContain("data:image/png;base64,");
      const two = await adminJson(t, "PUT", `/admin/brands/${SLUG}/artwork/color`, {
        url: "https://secure.test/two.svg",
      });
      expect(two.status).toBe(200);
      expect(await (await t.get(`/v1/svg/${SLUG}?variant=dark`, key)).text()).toContain("0050a0");
      const notImage = await adminJson(t, "PUT", `/admin/brands/${SLUG}/artwork/color`, {
        url: "https://secure.test/page.html",
      });
      expect(notImage.status).toBe(400);
      const privateUrl = await adminJson(t, "PUT", `/admin/brands/${SLUG}/artwork/color`, {
        url: "https://127.0.0.1/logo.svg",
      });
      expect(privateUrl.status).toBe(400);
      // a name that does not resolve
      const nowhere = await adminJson(t, "PUT", `/admin/brands/${SLUG}/artwork/color`, {
        url: "https://nowhere.test/logo.svg",
      });
      expect(await nowhere.json()).toMatchObject({ error: "invalid_pin", field: "url" });
      expect(
        (await admin(t, `/admin/brands/${SLUG}/artwork/color`, { method: "PUT" })).status,
      ).toBe(400);
    } finally {
      await t.close();
    }
  });

  test("PATCH pins name, colour and domains; a domain is re-assigned; null unpins", async () => {
    const t = await makeApp(OPERATORS);
    try {
      const key = await t.key("internal");
      const owner = (await (await t.get("/v1/brand?domain=gitlab.com", key)).json()) as {
        slug: string;
      };
      expect(owner.slug).not.toBe(SLUG);
      const r = await adminJson(t, "PATCH", `/admin/brands/${SLUG}`, {
        name: "GitHub, Inc.",
        brandColor: "#112233",
        domains: ["github.com", "gitlab.com"],
        aliases: ["Octocat Corp"],
        why: "test",
      });
      expect(r.status).toBe(200);
      const found = (await (await t.get("/v1/search?q=octocat%20corp", key)).json()) as {
        matches: { slug: string; name: string }[];
      };
      expect(found.matches[0]).toMatchObject({ slug: SLUG, name: "GitHub, Inc." });
      const b = (await (await t.get("/v1/brand?domain=gitlab.com", key)).json()) as {
        slug: string;
        name: string;
        brandColor: string;
      };
      expect(b).toMatchObject({ slug: SLUG, name: "GitHub, Inc.", brandColor: "112233" });
      const entry = (await (await t.get(`/v1/catalog/${SLUG}`, key)).json()) as { name: string };
      expect(entry.name).toBe("GitHub, Inc.");
      const bad = await adminJson(t, "PATCH", `/admin/brands/${SLUG}`, { brandColor: "blue" });
      expect(await bad.json()).toMatchObject({ error: "invalid_pin", field: "brandColor" });
      const unpin = await adminJson(t, "PATCH", `/admin/brands/${SLUG}`, { domains: null });
      expect(unpin.status).toBe(200);
      const back = (await (await t.get("/v1/brand?domain=gitlab.com", key)).json()) as {
        slug: string;
      };
      expect(back.slug).toBe(owner.slug);
      expect((await t.req("/admin/pins")).status).toBe(401);
    } finally {
      await t.close();
    }
  });

  test("a pin beats rediscovery; discovery and takedown are in the brand's trail, also once it is gone", async () => {
    const { sites, t } = await discoveryApp();
    try {
      const key = await t.key("internal");
      const found = (await (
        await adminJson(t, "POST", "/admin/discoveries", { domains: ["svgicon.test"] })
      ).json()) as { results: { slug: string; status: string }[] };
      const slug = found.results[0]?.slug as string;
      expect(found.results[0]?.status).toBe("found");
      const discovered = await (await t.get(`/v1/svg/${slug}?variant=color`, key)).text();
      const pinSvg = ICON_SVG.replace("#e4002b", "#123abc");
      const put = await admin(t, `/admin/brands/${slug}/artwork/color`, {
        method: "PUT",
        headers: { "content-type": "image/svg+xml" },
        body: pinSvg,
      });
      expect(put.status).toBe(200);
      const pinned = await (await t.get(`/v1/svg/${slug}?variant=color`, key)).text();
      expect(pinned).toContain("123abc");
      const again = await admin(t, "/admin/discoveries/svgicon.test/rediscover", {
        method: "POST",
      });
      expect(again.status).toBe(200);
      expect(await (await t.get(`/v1/svg/${slug}?variant=color`, key)).text()).toBe(pinned);
      expect(
        (await admin(t, `/admin/brands/${slug}/artwork/color`, { method: "DELETE" })).status,
      ).toBe(200);
      expect(await (await t.get(`/v1/svg/${slug}?variant=color`, key)).text()).toBe(discovered);

      const icon = await admin(t, `/admin/brands/${slug}/artwork/icon`, {
        method: "PUT",
        headers: { "content-type": "image/svg+xml" },
        body: pinSvg,
      });
      expect(icon.status).toBe(200);
      expect((await admin(t, "/admin/discoveries/svgicon.test", { method: "DELETE" })).status).toBe(
        200,
      );
      expect((await t.get(`/v1/svg/${slug}`, key)).status).toBe(404);
      const trail = await admin(t, `/admin/brands/${slug}/audit`);
      expect(trail.status).toBe(200);
      const events = ((await trail.json()) as { items: { type: string; by: string }[] }).items;
      // the forced rediscovery found the same artwork: no change, no event
      expect(events.map((e) => e.type)).toEqual([
        "takedown",
        "pin_set",
        "pin_removed",
        "pin_set",
        "discovery_stored",
      ]);
      expect(events[0]?.by).toMatch(/^admin:token-[0-9a-f]{8}$/);
      expect(events[4]?.by).toBe("discovery");
      // the pin left on the brand that is gone can still be removed
      const left = await admin(t, `/admin/brands/${slug}/artwork/icon`, { method: "DELETE" });
      expect(left.status).toBe(200);
      expect(((await (await admin(t, "/admin/pins")).json()) as { items: [] }).items).toEqual([]);
      expect((await admin(t, "/admin/brands/no-such-brand-xyz/audit")).status).toBe(404);
    } finally {
      await t.close();
      await sites.stop();
    }
  });

  test("discovery under a pin: the found artwork is kept beneath it and served once the pin goes", async () => {
    const { sites, t } = await discoveryApp();
    try {
      const key = await t.key("internal");
      const bare = t.deps.catalog.all().find((b) => Object.keys(b.variants).length === 0);
      const slug = bare?.slug as string;
      expect(
        (await adminJson(t, "PATCH", `/admin/brands/${slug}`, { domains: ["svgicon.test"] }))
          .status,
      ).toBe(200);
      const put = await admin(t, `/admin/brands/${slug}/artwork/color`, {
        method: "PUT",
        headers: { "content-type": "image/svg+xml" },
        body: ICON_SVG.replace("#e4002b", "#123abc"),
      });
      expect(put.status).toBe(200);
      const found = (await (
        await adminJson(t, "POST", "/admin/discoveries", { domains: ["svgicon.test"] })
      ).json()) as { results: { slug: string; status: string; created: boolean }[] };
      expect(found.results[0]).toMatchObject({ slug, status: "found", created: false });
      await t.deps.enrichment.idle();
      const color = async () => {
        const r = await t.get(`/v1/svg/${slug}?variant=color`, key);
        return { variant: r.headers.get("x-svg-variant"), svg: await r.text() };
      };
      expect((await color()).svg).toContain("123abc");
      await admin(t, `/admin/brands/${slug}/artwork/color`, { method: "DELETE" });
      const after = await color();
      expect(after.variant).toBe("color");
      expect(after.svg).toContain("e4002b");
    } finally {
      await t.close();
      await sites.stop();
    }
  });
});

describe("the catalog build and pins", () => {
  test("names the pins of the embedded store on brands a build retires, and what becomes of them", async () => {
    const dataDir = tempDir();
    const t = await makeApp({ DATA_DIR: dataDir, ...OPERATORS });
    try {
      const brands = t.deps.catalog
        .all()
        .filter((b) => b.variants.color)
        .slice(0, 4);
      const [moved, target, orphan, clash] = brands;
      for (const b of [moved, orphan, clash, target])
        expect(
          (await adminJson(t, "PATCH", `/admin/brands/${b?.slug}`, { name: `Pinned ${b?.slug}` }))
            .status,
        ).toBe(200);
      const pins = storedPins(dataDir);
      expect(pins).toHaveLength(4);
      const issued = Object.fromEntries(brands.map((b) => [b.slug, b.id]));
      const next = [target as Brand];
      const lines = retiredPins(pins, next, issued, {
        [moved?.slug as string]: target?.slug as string,
        [clash?.slug as string]: target?.slug as string,
      });
      expect(lines.sort()).toEqual(
        [
          `${moved?.slug} name: ${target?.slug} has its own pin on it, will be reported`,
          `${orphan?.slug} name: retired without a redirect, will be reported`,
          `${clash?.slug} name: ${target?.slug} has its own pin on it, will be reported`,
        ].sort(),
      );
      await adminJson(t, "PATCH", `/admin/brands/${target?.slug}`, { name: null });
      expect(
        retiredPins(storedPins(dataDir), next, issued, {
          [moved?.slug as string]: target?.slug as string,
        }),
      ).toContain(`${moved?.slug} name: moves to ${target?.slug}`);
      expect(storedPins(tempDir())).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
