/**
 * Web logo discovery end to end: the real app (embedded store, real catalog) with DISCOVERY on,
 * every request going through the loopback fixture proxy to the fixture sites.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { DiscoveryService } from "../../../src/catalog/discovery/service";
import type { DiscoveryRecord } from "../../../src/catalog/discovery/store/port";
import type { Deps } from "../../../src/deps";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../../support/app";
import { ICON_SVG, logoSites, SSRF_DNS } from "../../support/logo-sites";
import { bytes, type FixtureWeb, html, startFixtureWeb } from "../../support/web-fixtures";

let web: FixtureWeb;
let t: TestApp;
let dataDir: string;
let free: string;
let pro: string;
/** lookups: enterprise (no daily cap) so the many lookups here stay under the quota */
let ent: string;

const env = () => ({
  DISCOVERY: "on",
  DISCOVERY_PROXY: web.proxyUrl,
  DISCOVERY_ALLOW_PRIVATE: "on",
  DATA_DIR: dataDir,
});
const useFixtures = (deps: Deps) => {
  deps.discovery.fetcher.resolve = web.resolve;
  deps.discovery.txt = web.resolveTxt;
  deps.discovery.fetcher.requestTimeoutMs = 1000;
};

async function settle(app = t) {
  await app.deps.discovery.idle();
  await app.deps.enrichment.idle();
}

/** 404 and queued on the first lookup; the brand once discovery has run. */
async function discover(domain: string) {
  const first = await t.get(`/v1/brand?domain=${domain}`, ent);
  expect(first.status).toBe(404);
  expect(((await first.json()) as { error: string }).error).toBe("domain_not_found");
  await settle();
  return t.get(`/v1/brand?domain=${domain}`, ent);
}

const record = (domain: string) =>
  t.deps.store.discoveries.discovery(domain) as Promise<DiscoveryRecord>;

beforeAll(async () => {
  const sites = await logoSites();
  sites["duke-energy.com"] = {
    "/": html(
      `<title>Duke Energy</title><link rel="icon" type="image/svg+xml" href="/d.svg"><p>Power.</p>`,
    ),
    "/d.svg": bytes(ICON_SVG, "image/svg+xml"),
  };
  sites["pacificorp.com"] = {
    "/": html(`<title>PacifiCorp</title><link rel="mask-icon" href="/mask.svg"><p>Power too.</p>`),
    "/mask.svg": bytes(ICON_SVG, "image/svg+xml"),
  };
  web = await startFixtureWeb(sites, SSRF_DNS);
  dataDir = tempDir();
  t = await makeApp(env(), { customize: useFixtures });
  free = await t.key("free");
  pro = await t.key("pro");
  ent = await t.key("internal");
});
afterAll(async () => {
  await t?.close();
  await web?.stop();
});

describe("discovery of unknown domains", () => {
  test("SVG icon: 404 at first, then a new brand with mono, color, dark and light served as real artwork", async () => {
    const r = await discover("svgicon.test");
    expect(r.status).toBe(200);
    const b = (await r.json()) as {
      slug: string;
      name: string;
      variants: string[];
      brandColor: string;
    };
    expect(b.name).toBe("Svgicon Co");
    expect(b.slug).toBe("svgicon-co");
    expect(b.variants).toEqual(["mono", "color", "dark", "light"]);
    expect(b.brandColor).toBe("e4002b");
    const svg = await t.get(`/v1/svg/${b.slug}`, free);
    expect(svg.headers.get("x-svg-variant")).toBe("mono");
    expect(svg.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(await svg.text()).toContain("<path");
    const color = await t.get(`/v1/svg/${b.slug}?variant=color`, pro);
    expect(color.headers.get("x-svg-variant")).toBe("color");
    expect(await color.text()).toContain("#e4002b");
    const pngRes = await t.get(`/v1/png/${b.slug}?size=64`, free);
    expect(pngRes.status).toBe(200);
    expect(pngRes.headers.get("content-type")).toBe("image/png");
    const rec = await record("svgicon.test");
    expect(rec.status).toBe("found");
    expect(rec.created).toBe(true);
    expect(rec.assets[0]).toMatchObject({
      variant: "color",
      sourceUrl: "http://svgicon.test/icon.svg",
      kind: "svg",
      origin: "link-icon-svg",
      width: 24,
      height: 24,
    });
    expect(rec.assets[0]?.sha256).toMatch(/^[0-9a-f]{64}$/);
    // the catalog routes and search see the new brand
    const cat = await t.get(`/v1/catalog/${b.slug}`, free);
    expect(((await cat.json()) as { brandColor: string }).brandColor).toBe("e4002b");
    const search = await t.get("/v1/search?q=svgicon", free);
    const hits = (await search.json()) as { matches: { slug: string }[] };
    expect(hits.matches.map((h) => h.slug)).toContain(b.slug);
  });

  test("apple-touch-icon only: a raster brand, re-encoded, never drawn past 2x its pixels", async () => {
    const r = await discover("touchicon.test");
    const b = (await r.json()) as { slug: string; name: string; variants: string[] };
    expect(b.name).toBe("Touch Icon Bank");
    expect(b.variants).toEqual(["color", "dark", "light"]);
    // a free key gets mono only: there is none, so the placeholder
    expect((await t.get(`/v1/svg/${b.slug}`, free)).headers.get("x-svg-variant")).toBe(
      "placeholder",
    );
    const svg = await t.get(`/v1/svg/${b.slug}?variant=color`, pro);
    expect(svg.headers.get("x-svg-variant")).toBe("color");
    expect(svg.headers.get("content-security-policy")).toContain("img-src data:");
    const text = await svg.text();
    expect(text).toContain('viewBox="0 0 180 180"');
    expect(text).toContain("data:image/png;base64,");
    const rec = await record("touchicon.test");
    // re-encoded: what is stored is not the fetched file
    const stored = Buffer.from(/base64,([^"]+)/.exec(text)?.[1] ?? "", "base64");
    expect(rec.assets[0]?.sha256).not.toBe(
      new Bun.CryptoHasher("sha256").update(stored).digest("hex"),
    );
    expect(rec.assets[0]).toMatchObject({
      kind: "raster",
      width: 180,
      height: 180,
      origin: "apple-touch-icon",
    });
    const big = await t.get(`/v1/png/${b.slug}?variant=color&size=1024`, pro);
    const { data, info } = await sharp(Buffer.from(await big.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(info.width).toBe(1024);
    const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
    expect(alpha(512, 512)).toBe(255);
    expect(alpha(512 - 185, 512)).toBe(0); // the 180 px icon spans at most 360 px
    expect(alpha(512 - 170, 512)).toBe(255);
  });

  test("manifest only, favicon.ico only, JSON-LD and WordPress markup", async () => {
    const m = (await (await discover("webmanifest.test")).json()) as {
      name: string;
      brandColor: string;
    };
    expect(m.name).toBe("Manifest Motors");
    expect(m.brandColor).toBe("6b2fbf");
    expect((await record("webmanifest.test")).assets[0]).toMatchObject({
      origin: "manifest",
      width: 512, // as fetched; stored at 256 px (STORED_RASTER_SIDE)
    });

    const f = (await (await discover("faviconly.test")).json()) as { name: string };
    expect(f.name).toBe("Favicon Only Foods");
    expect((await record("faviconly.test")).assets[0]).toMatchObject({
      origin: "favicon.ico",
      kind: "raster",
      width: 48,
      height: 48,
    });

    const j = (await (await discover("jsonld.test")).json()) as { name: string };
    expect(j.name).toBe("JSON LD Logistics");
    expect((await record("jsonld.test")).assets[0]?.origin).toBe("json-ld");

    const w = (await (await discover("wpwidgets.test")).json()) as { name: string };
    expect(w.name).toBe("WP Widgets");
    const wp = await record("wpwidgets.test");
    expect(wp.assets[0]?.origin).toBe("img-logo");
    expect(wp.assets[0]?.sourceUrl).toContain("/wp-content/uploads/");
  });

  test("redirect chains and inline header SVG", async () => {
    const r = (await (await discover("redirects.test")).json()) as { variants: string[] };
    expect(r.variants).toEqual(["color", "dark", "light"]); // two colours: no mono
    const rec = await record("redirects.test");
    expect(rec.pageUrl).toBe("http://www.redirects.test/en/home");
    expect(rec.assets[0]?.sourceUrl).toBe("http://www.redirects.test/brand.svg");

    const i = (await (await discover("inline.test")).json()) as {
      name: string;
      variants: string[];
    };
    expect(i.name).toBe("Inline Instruments");
    expect(i.variants).toContain("mono");
    const inline = await record("inline.test");
    expect(inline.assets[0]).toMatchObject({
      origin: "inline-svg",
      sourceUrl: "http://inline.test/#inline-svg",
    });
  });

  test("script-laden SVG is served sanitized", async () => {
    const b = (await (await discover("scripted.test")).json()) as { slug: string };
    const svg = await (await t.get(`/v1/svg/${b.slug}?variant=color`, pro)).text();
    expect(svg).toContain("<circle");
    for (const bad of ["<script", "onload", "javascript:", "169.254", "<image"])
      expect(svg).not.toContain(bad);
  });

  test("parked pages, oversize and slow sites and wide og:images give no brand; tried once a day", async () => {
    for (const domain of ["parked.test", "oversize.test", "slow.test", "ogwide.test"]) {
      expect((await discover(domain)).status).toBe(404);
    }
    expect((await record("parked.test")).status).toBe("nothing");
    expect((await record("parked.test")).reason).toMatch(/parked/);
    expect((await record("oversize.test")).reason).toMatch(/too_large/);
    expect((await record("slow.test")).reason).toMatch(/timeout/);
    expect((await record("ogwide.test")).status).toBe("nothing");
    const before = web.proxied.length;
    await t.get("/v1/brand?domain=parked.test", ent);
    await settle();
    expect(web.proxied.length).toBe(before);
  });

  test("redirects to loopback and private addresses are refused and never reach the proxy", async () => {
    expect((await discover("to-loopback.test")).status).toBe(404);
    expect((await discover("to-private.test")).status).toBe(404);
    expect(await record("to-loopback.test")).toMatchObject({ status: "refused" });
    expect((await record("to-loopback.test")).reason).toMatch(/local name/);
    expect((await record("to-private.test")).reason).toMatch(/10\.20\.30\.40 is private/);
    expect(web.proxied.some((l) => l.includes("localhost") || l.includes("intranet"))).toBe(false);
  });

  test("the e-mail form goes through the same path", async () => {
    const r = await t.get(`/v1/brand?email=${encodeURIComponent("jane@svgicon.test")}`, ent);
    expect(r.status).toBe(200);
    expect(((await r.json()) as { name: string }).name).toBe("Svgicon Co");
  });
});

describe("discovery for directory brands without artwork", () => {
  test("a brand lookup answers at once and the artwork follows", async () => {
    const first = await t.get("/v1/brand?domain=duke-energy.com", ent);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { variants: string[] }).variants).toEqual([]);
    await settle();
    const b = (await (await t.get("/v1/brand?domain=duke-energy.com", ent)).json()) as {
      slug: string;
      name: string;
      variants: string[];
    };
    expect(b.slug).toBe("duke-energy");
    expect(b.name).toBe("Duke Energy");
    expect(b.variants).toEqual(["mono", "color", "dark", "light"]);
    const rec = await record("duke-energy.com");
    expect(rec).toMatchObject({ status: "found", created: false, slug: "duke-energy" });
  });

  test("an asset request for a brand without artwork queues discovery too (mask-icon: a mono mark)", async () => {
    const first = await t.get("/v1/svg/pacificorp", free);
    expect(first.headers.get("x-svg-variant")).toBe("placeholder");
    expect(first.headers.get("cache-control")).toBe("public, max-age=3600");
    await settle();
    const svg = await t.get("/v1/svg/pacificorp", free);
    expect(svg.headers.get("x-svg-variant")).toBe("mono");
    expect(svg.headers.get("cache-control")).toBe("public, max-age=86400");
    expect((await record("pacificorp.com")).assets[0]?.origin).toBe("mask-icon");
  });
});

const admin = (path: string, method = "GET", body?: unknown) =>
  t.req(path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("operator routes", () => {
  test("list with provenance, discover now, rediscover, and a permanent takedown", async () => {
    expect((await t.req("/admin/discoveries")).status).toBe(401);
    const list = (await (await admin("/admin/discoveries?status=found")).json()) as {
      items: {
        domain: string;
        variants: string[];
        assets: { sourceUrl: string; sha256: string }[];
      }[];
      total: number;
      stats: { found: number };
    };
    const svgicon = list.items.find((i) => i.domain === "svgicon.test");
    // the record holds what was fetched; dark and light are derived by enrichment
    expect(svgicon?.variants).toEqual(["mono", "color"]);
    expect(svgicon?.assets[0]?.sourceUrl).toBe("http://svgicon.test/icon.svg");
    expect(list.stats.found).toBeGreaterThan(5);

    // a domain tried today is answered from the store; force fetches again
    const before = web.proxied.length;
    const cached = (await (
      await admin("/admin/discoveries", "POST", { domains: ["parked.test"] })
    ).json()) as {
      summary: Record<string, number>;
    };
    expect(cached.summary.nothing).toBe(1);
    expect(web.proxied.length).toBe(before);
    const again = await admin("/admin/discoveries/svgicon.test/rediscover", "POST");
    expect(((await again.json()) as { status: string }).status).toBe("found");
    expect(web.proxied.length).toBeGreaterThan(before);

    const down = await admin("/admin/discoveries/svgicon.test", "DELETE");
    expect(((await down.json()) as { status: string }).status).toBe("taken_down");
    expect((await t.get("/v1/brand?domain=svgicon.test", ent)).status).toBe(404);
    expect((await t.get("/v1/svg/svgicon-co", free)).status).toBe(404);
    const re = await admin("/admin/discoveries/svgicon.test/rediscover", "POST");
    expect(((await re.json()) as { status: string }).status).toBe("taken_down");
    await settle();
    expect((await t.get("/v1/brand?domain=svgicon.test", ent)).status).toBe(404);

    // a directory brand goes back to no artwork
    const dukeDown = await admin("/admin/discoveries/duke-energy.com", "DELETE");
    expect(dukeDown.status).toBe(200);
    expect(((await dukeDown.json()) as { created: boolean }).created).toBe(false);
    const duke = (await (await t.get("/v1/brand?domain=duke-energy.com", ent)).json()) as {
      variants: string[];
    };
    expect(duke.variants).toEqual([]);
    await settle();
    expect((await record("duke-energy.com")).status).toBe("taken_down");

    expect((await admin("/admin/discoveries/not a domain!", "DELETE")).status).toBe(422);
  });
});

describe("queue", () => {
  test("a full queue drops and counts: one job runs, `queueSize` wait, the rest are dropped", () => {
    const d = t.deps;
    const svc = new DiscoveryService(
      d.store.discoveries,
      d.enrichment,
      d.catalog,
      d.discovery.fetcher,
      {
        enabled: true,
        workers: 1,
        queueSize: 1,
      },
    );
    expect(svc.requestDomain("q1.test")).toBe(true);
    expect(svc.requestDomain("q2.test")).toBe(true);
    // a domain queued already is not queued twice, and not counted as dropped
    expect(svc.requestDomain("q2.test")).toBe(false);
    expect(svc.requestDomain("q3.test")).toBe(false);
    expect(svc.requestDomain("q4.test")).toBe(false);
    expect(svc.stats()).toMatchObject({ running: 1, queued: 1, dropped: 2 });
    return svc.close();
  });
});

describe("stored", () => {
  test("discovered artwork is served after a restart (embedded store)", async () => {
    const slug = (await record("inline.test")).slug as string;
    await t.deps.close();
    const again = await makeApp({ DATA_DIR: dataDir }, {});
    try {
      const key = await again.key("free");
      const b = await again.get("/v1/brand?domain=inline.test", key);
      expect(b.status).toBe(200);
      // a wide header logo: the wordmark, and the colour artwork while the site has no icon
      expect(((await b.json()) as { slug: string; variants: string[] }).variants).toEqual([
        "mono",
        "color",
        "dark",
        "light",
        "wordmark",
      ]);
      // taken down stays down after a restart
      expect((await again.get("/v1/brand?domain=svgicon.test", key)).status).toBe(404);
      // DISCOVERY off: operators are told, nothing is fetched
      const off = await again.req("/admin/discoveries", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ domains: ["acme.test"] }),
      });
      expect(off.status).toBe(409);
      const svg = await again.get(`/v1/svg/${slug}`, key);
      expect(svg.status).toBe(200);
      expect(svg.headers.get("x-svg-variant")).toBe("mono");
      // DISCOVERY is off by default: an unknown domain queues nothing and nothing leaves
      const before = web.proxied.length;
      expect((await again.get("/v1/brand?domain=never-seen.test", key)).status).toBe(404);
      await again.deps.discovery.idle();
      expect(web.proxied.length).toBe(before);
      expect(again.deps.discovery.stats().queued).toBe(0);
    } finally {
      await again.close();
      t = await makeApp(env(), { customize: useFixtures });
    }
  });
});
