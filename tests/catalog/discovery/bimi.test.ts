/**
 * BIMI as a logo source: the TXT record over the system resolver (node:dns pointed at a UDP
 * DNS fixture on loopback) and over DoH (a loopback DoH fixture behind the forward proxy), the
 * SVG and mark certificate fetched over https from the TLS fixture, end to end in the real app.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  certificateSvg,
  dohTxt,
  parseBimi,
  systemTxt,
  tinyPsProblem,
} from "../../../src/catalog/discovery/bimi";
import { GuardedFetcher } from "../../../src/catalog/discovery/fetcher";
import type { DiscoveryRecord } from "../../../src/catalog/enrichment-port";
import { makeApp, type TestApp, tempDir } from "../../support/app";
import { dohSite, markCertificate, startUdpDns } from "../../support/dns-fixture";
import { png } from "../../support/logo-sites";
import { FIXTURE_TLS } from "../../support/tls-fixture";
import { bytes, type FixtureWeb, html, startFixtureWeb } from "../../support/web-fixtures";

const MARK =
  '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 64 64"><title>Acme</title><rect width="64" height="64" fill="#d40000"/><path fill="#fff" d="M16 48 32 12l16 36z"/></svg>';
const OTHER =
  '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 64 64"><title>Other</title><circle cx="32" cy="32" r="30" fill="#0050a0"/></svg>';
const WIDE = MARK.replace('viewBox="0 0 64 64"', 'viewBox="0 0 128 64"');
const SCRIPTED = MARK.replace("<title>", "<script>alert(1)</script><title>");
const HUGE = MARK.replace(
  "<title>Acme</title>",
  `<title>Acme</title><desc>${"x".repeat(40_000)}</desc>`,
);

const bimi = (l: string, a = "") => [`v=BIMI1; l=${l};${a ? ` a=${a};` : ""}`];
const RECORDS: Record<string, string[]> = {
  "default._bimi.bimi-only.test": bimi("https://secure.test/bimi/only.svg"),
  "default._bimi.bimi-cert.test": bimi(
    "https://secure.test/bimi/only.svg",
    "https://secure.test/bimi/mark.pem",
  ),
  "default._bimi.bimi-othercert.test": bimi(
    "https://secure.test/bimi/only.svg",
    "https://secure.test/bimi/other.pem",
  ),
  "default._bimi.bimi-private.test": bimi("https://intranet.bimi-private.test/logo.svg"),
  "default._bimi.bimi-huge.test": bimi("https://secure.test/bimi/huge.svg"),
  "default._bimi.bimi-wide.test": bimi("https://secure.test/bimi/wide.svg"),
};

let web: FixtureWeb;
let t: TestApp;
let key: string;
const dohAsked: string[] = [];

const home = (name: string) => ({
  "/": html(
    `<title>${name}</title><link rel="apple-touch-icon" href="/touch.png"><p>${name} sells things.</p>`,
  ),
});

beforeAll(async () => {
  const touch = bytes(await png(180, "#333333"), "image/png");
  const sites: Record<string, Record<string, ReturnType<typeof html>>> = {
    "doh.test": dohSite(RECORDS, dohAsked),
    "secure.test": {
      "/bimi/only.svg": bytes(MARK, "image/svg+xml"),
      "/bimi/huge.svg": bytes(HUGE, "image/svg+xml"),
      "/bimi/wide.svg": bytes(WIDE, "image/svg+xml"),
      "/bimi/mark.pem": bytes(markCertificate("bimi-cert.test", MARK), "application/x-pem-file"),
      "/bimi/other.pem": bytes(
        markCertificate("bimi-othercert.test", OTHER),
        "application/x-pem-file",
      ),
    },
  };
  for (const d of [
    "bimi-only",
    "bimi-cert",
    "bimi-othercert",
    "bimi-private",
    "bimi-huge",
    "bimi-wide",
  ])
    sites[`${d}.test`] = { ...home(`${d} Co`), "/touch.png": touch };
  web = await startFixtureWeb(sites, { "intranet.bimi-private.test": ["10.9.8.7"] }, FIXTURE_TLS);
  const dir = tempDir();
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, FIXTURE_TLS.cert);
  t = await makeApp(
    {
      DISCOVERY: "on",
      DISCOVERY_PROXY: web.proxyUrl,
      DISCOVERY_ALLOW_PRIVATE: "on",
      DISCOVERY_CA_FILE: caFile,
      DISCOVERY_DOH_URL: "http://doh.test/dns-query",
      DATA_DIR: dir,
    },
    {
      customize: (deps) => {
        deps.discovery.fetcher.resolve = web.resolve;
      },
    },
  );
  key = await t.key("internal");
});
afterAll(async () => {
  await t?.close();
  await web?.stop();
});

async function discovered(domain: string): Promise<DiscoveryRecord> {
  expect((await t.get(`/v1/brand?domain=${domain}&wait=8000`, key)).status).toBeOneOf([200, 404]);
  await t.deps.discovery.idle();
  return (await t.deps.store.enrichment.discovery(domain)) as DiscoveryRecord;
}

describe("BIMI records, SVGs and certificates", () => {
  test("records parse; SVG Tiny PS-like checks", () => {
    expect(
      parseBimi(["v=spf1 -all", "v=BIMI1; l=https://a.test/l.svg; a=https://a.test/a.pem"]),
    ).toEqual({ logo: "https://a.test/l.svg", certificate: "https://a.test/a.pem" });
    expect(parseBimi(["v=BIMI1; l=; a=;"])).toEqual({ logo: null, certificate: null });
    expect(parseBimi(["v=BIMI1; l=https://a/1.svg", "v=BIMI1; l=https://a/2.svg"])).toBeNull();
    expect(parseBimi(["v=spf1 -all"])).toBeNull();
    expect(tinyPsProblem(MARK)).toBeNull();
    expect(tinyPsProblem(WIDE)).toMatch(/not square/);
    expect(tinyPsProblem(SCRIPTED)).toMatch(/script/);
    expect(tinyPsProblem("<html></html>")).toMatch(/not an SVG/);
  });

  test("a mark certificate's logotype extension gives back its SVG", () => {
    expect(certificateSvg(markCertificate("x.test", MARK))).toBe(MARK);
    expect(certificateSvg(FIXTURE_TLS.cert)).toBeNull();
  });

  test("TXT over the system resolver, pointed at a UDP DNS server on loopback", async () => {
    const dns = await startUdpDns(RECORDS);
    try {
      const txt = systemTxt([dns.server]);
      expect(await txt("default._bimi.bimi-only.test")).toEqual(
        bimi("https://secure.test/bimi/only.svg"),
      );
      expect(await txt("default._bimi.nothing.test")).toEqual([]);
      expect(dns.asked).toContain("default._bimi.bimi-only.test");
    } finally {
      await dns.stop();
    }
  });

  test("TXT over DoH (RFC 8484 GET), through the forward proxy", async () => {
    const f = new GuardedFetcher({ userAgent: "test", proxy: web.proxyUrl, allowLoopback: true });
    f.resolve = web.resolve;
    const txt = dohTxt("http://doh.test/dns-query", f);
    expect(await txt("default._bimi.bimi-cert.test")).toEqual(
      RECORDS["default._bimi.bimi-cert.test"] as string[],
    );
    expect(await txt("default._bimi.nothing.test")).toEqual([]);
    expect(web.proxied.some((l) => l.startsWith("GET http://doh.test/dns-query?dns="))).toBe(true);
  });
});

describe("BIMI in discovery (DISCOVERY_DOH_URL)", () => {
  test("a record alone: its SVG is the brand's logo, tried before the page", async () => {
    const r = await discovered("bimi-only.test");
    expect(r.status).toBe("found");
    expect(r.assets[0]).toMatchObject({
      variant: "color",
      origin: "bimi",
      sourceUrl: "https://secure.test/bimi/only.svg",
      kind: "svg",
      width: 64,
    });
    expect(r.assets[0]?.verifiedMark).toBeUndefined();
    expect(dohAsked).toContain("default._bimi.bimi-only.test");
    // sanitized like any SVG: what is served is not the file as fetched
    expect(r.variants.color?.svg).toContain("<path");
  });

  test("a record and a certificate carrying the same SVG: verifiedMark true", async () => {
    const r = await discovered("bimi-cert.test");
    expect(r.assets[0]).toMatchObject({ origin: "bimi", verifiedMark: true });
  });

  test("a certificate whose logo differs: verifiedMark false", async () => {
    const r = await discovered("bimi-othercert.test");
    expect(r.assets[0]).toMatchObject({ origin: "bimi", verifiedMark: false });
  });

  test("a record pointing at a private address is refused before the proxy sees it", async () => {
    const before = web.proxied.length;
    const r = await discovered("bimi-private.test");
    expect(r.status).toBe("refused");
    expect(r.reason).toMatch(/10\.9\.8\.7 is private/);
    expect(web.proxied.slice(before).some((l) => l.includes("intranet"))).toBe(false);
  });

  test("an oversized or wide SVG is not used: the page's icon is", async () => {
    for (const d of ["bimi-huge.test", "bimi-wide.test"]) {
      const r = await discovered(d);
      expect(r.status).toBe("found");
      expect(r.assets[0]?.origin).toBe("apple-touch-icon");
    }
  });
});
