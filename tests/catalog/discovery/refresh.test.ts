/**
 * Fresh logos and no downgrade, on both stores (embedded SQLite and MongoDB via FerretDB): a
 * found domain is checked again when its refreshAt comes (the service's clock is moved, never
 * waited for): conditional GETs first (304: nothing changes), a changed logo replaces the old
 * one (its hashes kept in the record) unless a pin holds the variant; artwork read over plain
 * http (the https port refused) is marked website-http, never verified, and replaced by the
 * first later read over https. The fixture sites are https through the loopback proxy, with a
 * server certificate made here for their names. Also: wait= for a catalog brand without
 * artwork (embedded, the real catalog).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { MongoClient } from "mongodb";
import type { DiscoveryRecord } from "../../../src/catalog/discovery/store/port";
import type { Deps } from "../../../src/deps";
import { openMongoStore } from "../../../src/deps";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../../support/app";
import { smallCatalogFile } from "../../support/catalog";
import { makeRoot, makeServerCert } from "../../support/mark-pki";
import { mongoUrl, skipNote, testDbName } from "../../support/mongo";
import { describeUnless } from "../../support/skip";
import { until } from "../../support/wait";
import { bytes, type FixtureWeb, type Route, startFixtureWeb } from "../../support/web-fixtures";

setDefaultTimeout(60_000);

const DAY = 24 * 3600_000;
const START = Date.parse("2031-01-01T00:00:00.000Z");
const RED =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path fill="#c8102e" d="M12 2 22 22H2z"/></svg>';
const BLUE =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path fill="#0050a0" d="M2 2h20v20H2z"/></svg>';
const GREEN =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle fill="#00843d" cx="12" cy="12" r="10"/></svg>';
const HOSTS = ["fresh.test", "plain.test"];

/** Requests each fixture path answered, by status ("fresh.test/ 304"). */
const served: string[] = [];
/** The logo each host serves now (changed by the tests). */
const logo: Record<string, string> = {};

/** A route with an ETag and Last-Modified that honours If-None-Match. */
function conditional(host: string, path: string, body: () => string, type: string): Route {
  return (req) => {
    const text = body();
    const etag = `"${new Bun.CryptoHasher("sha256").update(text).digest("hex").slice(0, 16)}"`;
    if (req.headers.get("if-none-match") === etag) {
      served.push(`${host}${path} 304`);
      return new Response(null, { status: 304, headers: { etag } });
    }
    served.push(`${host}${path} 200`);
    return new Response(text, {
      headers: { "content-type": type, etag, "last-modified": "Wed, 01 Jan 2031 00:00:00 GMT" },
    });
  };
}

const site = (host: string, name: string) => ({
  "/": conditional(
    host,
    "/",
    () =>
      `<title>${name}</title><link rel="icon" type="image/svg+xml" href="/logo.svg"><p>${name} makes things.</p>`,
    "text/html",
  ),
  "/logo.svg": conditional(host, "/logo.svg", () => logo[host] as string, "image/svg+xml"),
});

let web: FixtureWeb;
let caFile: string;

beforeAll(async () => {
  const ca = await makeRoot(
    "Fixture TLS CA",
    new Date(Date.now() - DAY),
    new Date(Date.now() + 60 * DAY),
  );
  const tls = await makeServerCert(ca, HOSTS);
  caFile = join(tempDir(), "fixture-ca.pem");
  writeFileSync(caFile, ca.cert.toString("pem"));
  web = await startFixtureWeb(
    {
      "fresh.test": site("fresh.test", "Fresh Foods"),
      "plain.test": site("plain.test", "Plain Paper"),
      "duke-energy.com": {
        "/": bytes(
          '<title>Duke Energy</title><link rel="icon" type="image/svg+xml" href="/d.svg"><p>Power.</p>',
          "text/html",
        ),
        "/d.svg": async () => {
          // answers once the test has started waiting (a condition, not a time)
          await waitingStarted;
          return new Response(RED, { headers: { "content-type": "image/svg+xml" } });
        },
      },
    },
    {},
    tls,
  );
});
afterAll(async () => {
  await web?.stop();
});

let startWaiting: () => void = () => {};
const waitingStarted = new Promise<void>((r) => {
  startWaiting = r;
});

/** The refresh scenario on one app (embedded or MongoDB). */
async function scenario(t: TestApp) {
  const clock = { now: START };
  t.deps.discovery.now = () => clock.now;
  const key = await t.key("internal");
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const settle = async () => {
    await t.deps.discovery.idle();
    await t.deps.enrichment.idle();
  };
  const record = async (d: string) =>
    (await t.deps.store.discoveries.discovery(d)) as DiscoveryRecord;
  const brand = async (d: string) =>
    (await (await t.get(`/v1/brand?domain=${d}`, key)).json()) as {
      slug: string;
      verified: boolean;
      provenance: Record<string, string>;
    };
  const refresh = async () => {
    const n = await t.deps.discovery.refreshDueDomains();
    await settle();
    return n;
  };
  logo["fresh.test"] = RED;
  logo["plain.test"] = BLUE;
  served.length = 0;
  web.tlsHosts.add("fresh.test");
  web.tlsHosts.delete("plain.test");

  // first discovery: https, with validators; due again in 30 days ±20%
  expect((await t.get("/v1/brand?domain=fresh.test&wait=8000", key)).status).toBe(200);
  await settle();
  const first = await record("fresh.test");
  expect(first).toMatchObject({ status: "found", change: "new", pageUrl: "https://fresh.test/" });
  expect(first.pageValidators?.etag).toMatch(/^"/);
  expect(first.assets[0]).toMatchObject({ provenance: "website", etag: expect.any(String) });
  const due = Date.parse(first.refreshAt as string) - Date.parse(first.at);
  expect(due).toBeGreaterThanOrEqual(24 * DAY);
  expect(due).toBeLessThanOrEqual(36 * DAY);
  const slug = (await brand("fresh.test")).slug;
  expect((await brand("fresh.test")).verified).toBe(true);

  // not due yet: nothing is queued
  clock.now = Date.parse(first.refreshAt as string) - 1000;
  expect(await refresh()).toBe(0);

  // due, nothing changed: conditional GETs answered 304, no body fetched again
  clock.now = Date.parse(first.refreshAt as string) + 1000;
  served.length = 0;
  expect(await refresh()).toBe(1);
  expect(served).toEqual(["fresh.test/ 304", "fresh.test/logo.svg 304"]);
  const checked = await record("fresh.test");
  expect(checked).toMatchObject({ change: "unchanged", at: new Date(clock.now).toISOString() });
  expect(Date.parse(checked.refreshAt as string)).toBeGreaterThan(clock.now + 20 * DAY);
  expect(checked.variants.color?.sha256).toBe(first.variants.color?.sha256);

  // a new logo: the next check replaces the old one; the record keeps the old hashes
  logo["fresh.test"] = GREEN;
  clock.now = Date.parse(checked.refreshAt as string) + 1000;
  expect(await refresh()).toBe(1);
  const replaced = await record("fresh.test");
  expect(replaced.change).toBe("replaced");
  expect(replaced.previous?.color).toBe(first.variants.color?.sha256);
  expect(replaced.variants.color?.sha256).not.toBe(first.variants.color?.sha256);
  const svg = await t.get(`/v1/svg/${slug}?variant=color`, key);
  expect(await svg.text()).toContain("#00843d");
  expect(svg.headers.get("x-asset-provenance")).toBe("website");
  for (const format of ["png", "webp"]) {
    const img = await t.get(`/v1/${format}/${slug}?variant=color&size=64`, key);
    expect(img.headers.get("content-type")).toBe(`image/${format}`);
    expect(img.headers.get("x-asset-provenance")).toBe("website");
  }
  // a catalog brand's artwork says so too
  expect((await t.get("/v1/png/github?size=64", key)).headers.get("x-asset-provenance")).toBe(
    "catalog",
  );

  // a pin holds its variant: the next change is stored, the pin stays served
  const pin = await t.req(`/admin/brands/${slug}/artwork/color`, {
    method: "PUT",
    headers: { ...admin, "content-type": "image/svg+xml" },
    body: BLUE,
  });
  expect(pin.status).toBe(200);
  logo["fresh.test"] = RED;
  clock.now = Date.parse(replaced.refreshAt as string) + 1000;
  expect(await refresh()).toBe(1);
  const held = await record("fresh.test");
  expect(held).toMatchObject({ change: "replaced", pinned: expect.arrayContaining(["color"]) });
  const pinned = await t.get(`/v1/svg/${slug}?variant=color`, key);
  expect(await pinned.text()).toContain("#0050a0");
  expect(pinned.headers.get("x-asset-provenance")).toBe("pin");
  expect((await brand("fresh.test")).provenance.color).toBe("pin");

  // checked again, unchanged (304s): the record no longer says what was replaced
  clock.now = Date.parse(held.refreshAt as string) + 1000;
  served.length = 0;
  expect(await refresh()).toBe(1);
  expect(served).toEqual(["fresh.test/ 304", "fresh.test/logo.svg 304"]);
  const again = await record("fresh.test");
  expect(again.change).toBe("unchanged");
  expect(again.previous).toBeUndefined();

  // plain http only (CONNECT answered 502): marked website-http, never verified, due in a day
  expect((await t.get("/v1/brand?domain=plain.test&wait=8000", key)).status).toBe(200);
  await settle();
  const plain = await record("plain.test");
  expect(plain.pageUrl).toBe("http://plain.test/");
  expect(plain.assets.every((a) => a.provenance === "website-http")).toBe(true);
  expect(plain.refreshAt).toBe(new Date(Date.parse(plain.at) + DAY).toISOString());
  const insecure = await brand("plain.test");
  expect(insecure.provenance.color).toBe("website-http");
  expect(insecure.verified).toBe(false);
  const plainSvg = await t.get(`/v1/svg/${insecure.slug}?variant=color`, key);
  expect(plainSvg.headers.get("x-asset-provenance")).toBe("website-http");

  // the site gets https: the first later read over https replaces what plain http gave
  web.tlsHosts.add("plain.test");
  clock.now = Date.parse(plain.refreshAt as string) + 1000;
  expect(await refresh()).toBeGreaterThanOrEqual(1);
  const secured = await record("plain.test");
  expect(secured.pageUrl).toBe("https://plain.test/");
  expect(secured.assets.every((a) => a.provenance === "website")).toBe(true);
  const now = await brand("plain.test");
  expect(now.provenance.color).toBe("website");
  expect(now.verified).toBe(true);
}

describe("refresh and downgrade (embedded store)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp(
      {
        DISCOVERY: "on",
        DISCOVERY_PROXY: web.proxyUrl,
        DISCOVERY_ALLOW_PRIVATE: "on",
        DISCOVERY_CA_FILE: caFile,
        DATA_DIR: tempDir(),
      },
      { customize: fixtures },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  test("conditional checks, a replaced logo, a pin that holds, http replaced by https", async () => {
    await scenario(t);
  });

  test("wait= waits for a catalog brand without artwork while its discovery is queued", async () => {
    const key = await t.key("internal");
    const lookup = t.get("/v1/brand?domain=duke-energy.com&wait=8000", key);
    // the discovery has asked for the page: the lookup is waiting for it
    await until(
      () => web.proxied.some((l) => l.includes("duke-energy.com")),
      10_000,
      "the discovery to ask for the page",
    );
    startWaiting();
    const r = await lookup;
    expect(r.status).toBe(200);
    const b = (await r.json()) as { slug: string; variants: string[]; provenance: object };
    expect(b.slug).toBe("duke-energy");
    expect(b.variants).toContain("color");
    expect(b.provenance).toMatchObject({ color: "website-http" });
  });
});

const mongo = await mongoUrl();

describeUnless(mongo.reason)(`refresh and downgrade on MongoDB ${skipNote(mongo)}`.trim(), () => {
  const dbName = testDbName("bapi_refresh");
  let client: MongoClient;
  let t: TestApp;
  beforeAll(async () => {
    const { MongoClient } = await import("mongodb");
    client = await MongoClient.connect(mongo.url as string);
    const store = await openMongoStore(
      { CATALOG_FILE: smallCatalogFile(), MONGODB_DB: dbName },
      mongo.url as string,
    );
    t = await makeApp(
      {
        DISCOVERY: "on",
        DISCOVERY_PROXY: web.proxyUrl,
        DISCOVERY_ALLOW_PRIVATE: "on",
        DISCOVERY_CA_FILE: caFile,
      },
      { store, customize: fixtures },
    );
  });
  afterAll(async () => {
    await t?.deps.close();
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  test("conditional checks, a replaced logo, a pin that holds, http replaced by https", async () => {
    await scenario(t);
    // the whole record is replaced: no field of an earlier record survives in the document
    const doc = await client
      .db(dbName)
      .collection("discoveries")
      .findOne({ _id: "fresh.test" as never });
    expect(doc?.change).toBe("unchanged");
    expect(doc && "previous" in doc).toBe(false);
  });
});

function fixtures(deps: Deps) {
  deps.discovery.fetcher.resolve = web.resolve;
  // BIMI's TXT lookups too: the system resolver is not on loopback
  deps.discovery.txt = web.resolveTxt;
  deps.discovery.fetcher.requestTimeoutMs = 2000;
}
