/**
 * Discovery on pages shaped like real home pages it got wrong: <base href>, one image linked
 * many times, a hero picture named "logo", unlinked touch icons, a home page answering 403,
 * 16 px icons only, a redirect to another catalog brand's site, an untrusted certificate.
 * The real app (embedded store, real catalog) with every request through the loopback proxy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import type { DiscoveryRecord } from "../../../src/catalog/discovery/store/port";
import type { Deps } from "../../../src/deps";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../../support/app";
import { ICON_SVG, ico, png } from "../../support/logo-sites";
import { FIXTURE_TLS } from "../../support/tls-fixture";
import {
  bytes,
  type FixtureWeb,
  fixtureDiscoveryEnv,
  html,
  type Route,
  redirect,
  startFixtureWeb,
  useFixtureWeb,
} from "../../support/web-fixtures";

let web: FixtureWeb;
let t: TestApp;
let ent: string;
let pro: string;
/** requests per "host path", counted by the fixture routes that count */
const hits = new Map<string, number>();
const counted =
  (key: string, route: Route): Route =>
  (req) => {
    hits.set(key, (hits.get(key) ?? 0) + 1);
    return route(req);
  };
const page = (head: string, body = "<main><p>Products and services for everyone.</p></main>") =>
  html(`<!doctype html><html><head>${head}</head><body>${body}</body></html>`);

async function settle() {
  await t.deps.discovery.idle();
  await t.deps.enrichment.idle();
}
const record = (domain: string) =>
  t.deps.store.discoveries.discovery(domain) as Promise<DiscoveryRecord>;
const rediscover = async (domain: string) => {
  const r = await t.req(`/admin/discoveries/${domain}/rediscover`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(r.status).toBe(200);
  return (await r.json()) as DiscoveryRecord;
};
/** the first lookup (404, queued), then the brand once discovery has run */
async function lookupTwice(domain: string) {
  expect((await t.get(`/v1/brand?domain=${domain}`, ent)).status).toBe(404);
  await settle();
  return t.get(`/v1/brand?domain=${domain}`, ent);
}

beforeAll(async () => {
  const p16 = await png(16, "#c8102e");
  const p48 = await png(48, "#0a7d32");
  const p180 = await png(180, "#0a7d32");
  const p192 = await png(192, "#6b2fbf");
  const p512 = await png(512, "#6b2fbf");
  const hero = await png(600, "#223344");
  const broken = new TextEncoder().encode("not an image at all");
  const sites = {
    // 1. <base href> on another host: icons resolve against it, not the page
    "basehref.test": {
      "/": page(
        `<title>Base Href Books</title><base href="http://static-basehref.test/assets/"><link rel="icon" type="image/svg+xml" href="img/icon.svg">`,
      ),
    },
    "static-basehref.test": { "/assets/img/icon.svg": bytes(ICON_SVG, "image/svg+xml") },
    // 2. one broken image linked nine ways, then a good JSON-LD logo
    "dupes.test": {
      "/": page(
        `<title>Dupes Dairy</title>${[
          "16x16",
          "32x32",
          "48x48",
          "64x64",
          "96x96",
          "128x128",
          "192x192",
        ]
          .map((s) => `<link rel="icon" sizes="${s}" href="/static/icon.png">`)
          .join(
            "",
          )}<link rel="apple-touch-icon" href="/static/icon.png"><link rel="shortcut icon" href="/static/icon.png"><script type="application/ld+json">{"@type":"Organization","name":"Dupes Dairy","logo":"/brand/mark.png"}</script>`,
      ),
      "/static/icon.png": counted("dupes icon", bytes(broken, "image/png")),
      "/brand/mark.png": bytes(p192, "image/png"),
    },
    // 3. a product hero picture with "logo" in its file name, and the real touch icon
    "heroshot.test": {
      "/": page(
        `<title>Heroshot Cameras</title><link rel="apple-touch-icon" href="/touch.png">`,
        `<header><a href="/"><span>Heroshot</span></a></header><main><section class="hero"><img src="/media/logo_hero_light@2x.png" width="600" height="600" alt="The new X100"></section></main>`,
      ),
      "/touch.png": bytes(p180, "image/png"),
      "/media/logo_hero_light@2x.png": counted("hero", bytes(hero, "image/png")),
    },
    // 4. touch icons nobody links
    "unlinked.test": {
      "/": page("<title>Unlinked Umbrellas</title>"),
      "/apple-touch-icon.png": bytes(p180, "image/png"),
      "/favicon.ico": bytes(ico([{ side: 48, png: p48 }]), "image/x-icon"),
    },
    "precomposed.test": {
      "/": page("<title>Precomposed Pianos</title>"),
      "/apple-touch-icon-precomposed.png": bytes(p192, "image/png"),
    },
    // 5. a home page behind a bot wall (403) still serves its root icons
    "ameren.com": {
      "/": () => new Response("<title>Access denied</title>", { status: 403 }),
      "/apple-touch-icon.png": bytes(p180, "image/png"),
      "/favicon.ico": bytes(ico([{ side: 48, png: p48 }]), "image/x-icon"),
    },
    "walled.test": {
      "/": () => new Response("<title>Just a moment...</title>", { status: 403 }),
      "/apple-touch-icon.png": bytes(p180, "image/png"),
    },
    // 6. 16 px icons only
    "tiny.test": {
      "/": page(`<title>Tiny Tools</title><link rel="icon" href="/favicon-16.png" sizes="16x16">`),
      "/favicon-16.png": bytes(p16, "image/png"),
      "/favicon.ico": bytes(ico([{ side: 16, png: p16 }]), "image/x-icon"),
    },
    // 7. bmoharris.com (brand "bmo") redirects to bmo.com (brand "bmo-q806693")
    "bmoharris.com": { "/": redirect("http://www.bmo.com/en-us/", 301) },
    "bmo.com": { "/": redirect("http://www.bmo.com/", 301) },
    "www.bmo.com": {
      "/": page(`<title>BMO</title><link rel="icon" type="image/svg+xml" href="/bmo.svg">`),
      "/en-us/": page(
        `<title>BMO US</title><link rel="icon" type="image/svg+xml" href="/bmo.svg">`,
      ),
      "/bmo.svg": bytes(ICON_SVG, "image/svg+xml"),
    },
    // 8. https with a certificate the fetcher does not trust (its http site is fine)
    "secure.test": {
      "/": page(`<title>Secure Co</title><link rel="icon" type="image/svg+xml" href="/i.svg">`),
      "/i.svg": bytes(ICON_SVG, "image/svg+xml"),
    },
    // 5 (build): the best icon, not the first usable
    "bestof.test": {
      "/": page(
        `<title>Bestof Bikes</title><link rel="icon" href="/fav-48.png"><link rel="manifest" href="/m.json">`,
        `<header><a href="/" class="logo"><img src="/wordmark.svg" alt="Bestof Bikes" width="300" height="60"></a></header><main><p>Bikes.</p></main>`,
      ),
      "/fav-48.png": bytes(p48, "image/png"),
      "/m.json": bytes(
        JSON.stringify({ icons: [{ src: "/icon-192.png" }, { src: "/icon-512.png" }] }),
        "application/json",
      ),
      "/icon-192.png": bytes(p192, "image/png"),
      "/icon-512.png": bytes(p512, "image/png"),
      "/wordmark.svg": bytes(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 60"><path fill="#113355" d="M0 0h300v60H0z"/><path fill="#fff" d="M10 10h40v40H10z"/></svg>',
        "image/svg+xml",
      ),
    },
  };
  web = await startFixtureWeb(sites, {}, FIXTURE_TLS);
  t = await makeApp(fixtureDiscoveryEnv(web, { DATA_DIR: tempDir() }), {
    customize: useFixtureWeb(web, 2000),
  });
  ent = await t.key("internal");
  pro = await t.key("pro");
});
afterAll(async () => {
  await t?.close();
  await web?.stop();
});

describe("pages discovery got wrong", () => {
  test("<base href>: icon links resolve against the base, not the page", async () => {
    expect((await lookupTwice("basehref.test")).status).toBe(200);
    expect((await record("basehref.test")).assets[0]?.sourceUrl).toBe(
      "http://static-basehref.test/assets/img/icon.svg",
    );
  });

  test("an image linked nine times is fetched once; the next candidate is tried", async () => {
    expect((await lookupTwice("dupes.test")).status).toBe(200);
    expect(hits.get("dupes icon")).toBe(1);
    expect((await record("dupes.test")).assets[0]).toMatchObject({
      origin: "json-ld",
      sourceUrl: "http://dupes.test/brand/mark.png",
    });
  });

  test("a hero picture named logo_hero is no logo: the touch icon is", async () => {
    expect((await lookupTwice("heroshot.test")).status).toBe(200);
    expect(hits.get("hero")).toBeUndefined();
    expect((await record("heroshot.test")).assets[0]?.origin).toBe("apple-touch-icon");
  });

  test("/apple-touch-icon.png and -precomposed are tried when nothing links them", async () => {
    expect((await lookupTwice("unlinked.test")).status).toBe(200);
    expect((await record("unlinked.test")).assets[0]).toMatchObject({
      origin: "apple-touch-icon-root",
      sourceUrl: "http://unlinked.test/apple-touch-icon.png",
      width: 180,
    });
    expect((await lookupTwice("precomposed.test")).status).toBe(200);
    expect((await record("precomposed.test")).assets[0]).toMatchObject({
      sourceUrl: "http://precomposed.test/apple-touch-icon-precomposed.png",
      width: 192,
    });
  });

  test("a home page answering 403 still gives a catalog brand its root icons; an unknown domain stays unknown", async () => {
    const r = await rediscover("ameren.com");
    expect(r).toMatchObject({ status: "found", slug: "ameren", created: false });
    expect(r.assets[0]).toMatchObject({ origin: "apple-touch-icon-root", width: 180 });
    const b = (await (await t.get("/v1/brand?domain=ameren.com", ent)).json()) as {
      variants: string[];
    };
    expect(b.variants).toContain("color");

    expect((await lookupTwice("walled.test")).status).toBe(404);
    const walled = await record("walled.test");
    expect(walled.status).toBe("nothing");
    expect(walled.reason).toBe("home page answered HTTP 403; the site names no brand");
  });

  test("16 px icons only: kept as low-resolution artwork, drawn at most 2x, replaced by a better one", async () => {
    const r = await lookupTwice("tiny.test");
    expect(r.status).toBe(200);
    const slug = ((await r.json()) as { slug: string }).slug;
    const rec = await record("tiny.test");
    expect(rec.assets[0]).toMatchObject({ kind: "raster", width: 16, lowRes: true });
    expect(rec.variants.color?.source).toBe("web:http:raster:16x16");
    // the PNG route never draws it past 32 px, whatever the size asked
    const big = await t.get(`/v1/png/${slug}?variant=color&size=256`, pro);
    const { data, info } = await sharp(Buffer.from(await big.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(info.width).toBe(256);
    const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
    expect(alpha(128, 128)).toBe(255);
    expect(alpha(128 - 20, 128)).toBe(0);

    // the site gets a touch icon; a lookup after a day fetches again and replaces the icon
    web.sites["tiny.test"] = {
      ...web.sites["tiny.test"],
      "/apple-touch-icon.png": bytes(await png(180, "#c8102e"), "image/png"),
    };
    // low-resolution artwork is due again a day later: the service's clock is moved on
    expect(rec.refreshAt).toBe(new Date(Date.parse(rec.at) + 24 * 3600_000).toISOString());
    t.deps.discovery.now = () => Date.parse(rec.at) + 25 * 3600_000;
    try {
      expect((await t.get(`/v1/brand?domain=tiny.test`, ent)).status).toBe(200);
      await settle();
    } finally {
      t.deps.discovery.now = Date.now;
    }
    const better = await record("tiny.test");
    expect(better.assets[0]).toMatchObject({ origin: "apple-touch-icon-root", width: 180 });
    expect(better.assets[0]?.lowRes).toBeUndefined();
    expect(better.slug).toBe(slug);
  });

  test("what is found on a domain is stored on the brand that owns it; the redirect is recorded", async () => {
    // bmo.com is "bmo-q806693"'s, though "bmo" names https://www.bmo.com/ as its website
    const own = await rediscover("bmo.com");
    expect(own).toMatchObject({ status: "found", slug: "bmo-q806693", brandId: 7081 });
    expect(own.redirects).toEqual(["http://bmo.com/"]);
    // bmoharris.com is "bmo"'s, though its home page redirects to bmo.com
    const harris = await rediscover("bmoharris.com");
    expect(harris).toMatchObject({ status: "found", slug: "bmo", brandId: 7080 });
    expect(harris.aliases).toEqual(["bmo.com"]);
    expect(harris.redirects).toEqual(["http://bmoharris.com/"]);
    expect(harris.pageUrl).toBe("http://www.bmo.com/en-us/");
    expect((await record("bmo.com")).slug).toBe("bmo-q806693");
  });

  test("an untrusted certificate is a failure: the page is not fetched again over http", async () => {
    const before = web.proxied.length;
    expect((await lookupTwice("secure.test")).status).toBe(404);
    const rec = await record("secure.test");
    expect(rec.status).toBe("failed");
    expect(rec.reason).toMatch(/^tls: /);
    expect(web.proxied.slice(before)).toEqual(["CONNECT secure.test:443"]);
  });

  test("the best square icon wins (largest raster), a wide header logo is the wordmark", async () => {
    expect((await lookupTwice("bestof.test")).status).toBe(200);
    const rec = await record("bestof.test");
    const by = Object.fromEntries(rec.assets.map((a) => [a.variant, a]));
    expect(by.color).toMatchObject({ sourceUrl: "http://bestof.test/icon-512.png", width: 512 });
    expect(by.wordmark).toMatchObject({ sourceUrl: "http://bestof.test/wordmark.svg" });
    expect(rec.variants.wordmark?.source).toBe("web:http:svg");
  });
});

describe("behind an egress proxy that resolves (DISCOVERY_PROXY_RESOLVES, DISCOVERY_CA_FILE)", () => {
  test("a host without DNS discovers through the proxy, https included", async () => {
    const dir = tempDir();
    const caFile = join(dir, "proxy-ca.pem");
    writeFileSync(caFile, FIXTURE_TLS.cert);
    const lookups: string[] = [];
    const app = await makeApp(
      {
        DISCOVERY: "on",
        DISCOVERY_PROXY: web.proxyUrl,
        DISCOVERY_PROXY_RESOLVES: "on",
        DISCOVERY_CA_FILE: caFile,
        DATA_DIR: dir,
      },
      {
        customize: (deps: Deps) => {
          deps.discovery.txt = web.resolveTxt;
          deps.discovery.fetcher.resolve = async (host) => {
            lookups.push(host);
            throw new Error(`getaddrinfo EAI_AGAIN ${host}`);
          };
        },
      },
    );
    try {
      const key = await app.key("internal");
      expect((await app.get("/v1/brand?domain=secure.test", key)).status).toBe(404);
      await app.deps.discovery.idle();
      await app.deps.enrichment.idle();
      const r = await app.get("/v1/brand?domain=secure.test", key);
      expect(r.status).toBe(200);
      expect(((await r.json()) as { name: string }).name).toBe("Secure Co");
      const rec = await app.deps.store.discoveries.discovery("secure.test");
      expect(rec?.assets[0]?.sourceUrl).toBe("https://secure.test/i.svg");
      expect(lookups).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
