/**
 * BIMI as a logo source, end to end in the real app: the TXT record over DoH (a loopback DoH
 * fixture behind the forward proxy) and over the system resolver (a UDP DNS fixture), the SVG
 * and the mark certificates over https from the TLS fixture. The certificates are made here
 * from the test's own root, given to the app through DISCOVERY_VMC_ROOTS; the service's clock
 * is fixed, so validity never depends on today's date.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { dohTxt, parseBimi, systemTxt, tinyPsProblem } from "../../../src/catalog/discovery/bimi";
import { GuardedFetcher } from "../../../src/catalog/discovery/fetcher";
import type { DiscoveryRecord } from "../../../src/catalog/discovery/store/port";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir } from "../../support/app";
import { dohSite, startUdpDns } from "../../support/dns-fixture";
import { png } from "../../support/logo-sites";
import {
  type Authority,
  type MarkOptions,
  makeIntermediate,
  makeMark,
  makeRoot,
  pemOf,
} from "../../support/mark-pki";
import { FIXTURE_TLS } from "../../support/tls-fixture";
import { bytes, type FixtureWeb, html, startFixtureWeb } from "../../support/web-fixtures";

/** The service's clock in these tests; certificates are valid around it, or not. */
const NOW = Date.parse("2031-03-15T12:00:00.000Z");
const DAY = 24 * 60 * 60 * 1000;
const at = (days: number) => new Date(NOW + days * DAY);

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
const LOGO = "https://secure.test/bimi/mark.svg";
const pemUrl = (name: string) => `https://secure.test/bimi/${name}.pem`;

/** Domains with a certificate, and how each is made (all name MARK, served at LOGO). */
const CERTIFIED = [
  "verified",
  "otherdomain",
  "expired",
  "notyet",
  "selfsigned",
  "nousage",
  "mismatch",
  "untrusted",
  "wall",
] as const;
type Certified = (typeof CERTIFIED)[number];

const RECORDS: Record<string, string[]> = {
  "default._bimi.bimi-only.test": bimi(LOGO),
  "default._bimi.bimi-private.test": bimi("https://intranet.bimi-private.test/logo.svg"),
  "default._bimi.bimi-huge.test": bimi("https://secure.test/bimi/huge.svg"),
  "default._bimi.bimi-wide.test": bimi("https://secure.test/bimi/wide.svg"),
  "default._bimi.bimi-nopem.test": bimi(LOGO, "https://secure.test/bimi/missing.pem"),
};
for (const c of CERTIFIED) RECORDS[`default._bimi.bimi-${c}.test`] = bimi(LOGO, pemUrl(c));

let web: FixtureWeb;
let t: TestApp;
let key: string;
const dohAsked: string[] = [];

const home = (name: string) => ({
  "/": html(
    `<title>${name}</title><link rel="apple-touch-icon" href="/touch.png"><p>${name} sells things.</p>`,
  ),
});

/** The PEM served for each certified domain: a chain through `ca` to the test root, or a refusal. */
async function certificates(ca: Authority): Promise<Record<Certified, string>> {
  const valid = { svg: MARK, notBefore: at(-30), notAfter: at(300) };
  const mark = (domain: string, extra: Partial<MarkOptions> = {}, issuer: Authority | null = ca) =>
    makeMark(issuer, { ...valid, domains: [domain], ...extra });
  const stranger = await makeRoot("Stranger Mark Root", at(-400), at(4000));
  const strangerCa = await makeIntermediate(stranger, "Stranger Mark CA", at(-300), at(3000));
  const chain = async (leaf: Promise<Awaited<ReturnType<typeof makeMark>>>, via = ca) =>
    pemOf(await leaf, via.cert);
  return {
    verified: await chain(mark("bimi-verified.test", { organization: "Verified Widgets Inc" })),
    otherdomain: await chain(mark("someone-else.test")),
    expired: await chain(mark("bimi-expired.test", { notBefore: at(-400), notAfter: at(-1) })),
    notyet: await chain(mark("bimi-notyet.test", { notBefore: at(2), notAfter: at(400) })),
    selfsigned: pemOf(await mark("bimi-selfsigned.test", {}, null)),
    nousage: await chain(mark("bimi-nousage.test", { bimiUsage: false })),
    mismatch: await chain(mark("bimi-mismatch.test", { hashOf: OTHER })),
    untrusted: await chain(mark("bimi-untrusted.test", {}, strangerCa), strangerCa),
    wall: await chain(mark("bimi-wall.test", { organization: "Walled Garden Bank" })),
  };
}

beforeAll(async () => {
  const root = await makeRoot("Test Mark Root", at(-400), at(4000));
  const ca = await makeIntermediate(root, "Test Mark CA", at(-300), at(3000));
  const pems = await certificates(ca);
  const touch = bytes(await png(180, "#333333"), "image/png");
  const secure: Record<string, ReturnType<typeof html>> = {
    "/bimi/mark.svg": bytes(MARK, "image/svg+xml"),
    "/bimi/huge.svg": bytes(HUGE, "image/svg+xml"),
    "/bimi/wide.svg": bytes(WIDE, "image/svg+xml"),
  };
  for (const c of CERTIFIED) secure[`/bimi/${c}.pem`] = bytes(pems[c], "application/x-pem-file");
  const sites: Record<string, Record<string, ReturnType<typeof html>>> = {
    "doh.test": dohSite(RECORDS, dohAsked),
    "secure.test": secure,
  };
  for (const d of ["only", "private", "huge", "wide", "nopem", ...CERTIFIED])
    sites[`bimi-${d}.test`] = { ...home(`Bimi ${d} Co`), "/touch.png": touch };
  // a home page that never answers in time: BIMI alone names the brand
  sites["bimi-wall.test"] = {
    "/": async () => {
      await Bun.sleep(3000);
      return new Response("<title>late</title>", { headers: { "content-type": "text/html" } });
    },
  };
  web = await startFixtureWeb(sites, { "intranet.bimi-private.test": ["10.9.8.7"] }, FIXTURE_TLS);
  const dir = tempDir();
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, FIXTURE_TLS.cert);
  const rootsFile = join(dir, "mark-roots.pem");
  writeFileSync(rootsFile, root.cert.toString("pem"));
  t = await makeApp(
    {
      DISCOVERY: "on",
      DISCOVERY_PROXY: web.proxyUrl,
      DISCOVERY_ALLOW_PRIVATE: "on",
      DISCOVERY_CA_FILE: caFile,
      DISCOVERY_DOH_URL: "http://doh.test/dns-query",
      DISCOVERY_VMC_ROOTS: rootsFile,
      DATA_DIR: dir,
    },
    {
      customize: (deps) => {
        deps.discovery.fetcher.resolve = web.resolve;
        deps.discovery.fetcher.requestTimeoutMs = 1000;
        deps.discovery.now = () => NOW;
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
  await t.deps.enrichment.idle();
  return (await t.deps.store.discoveries.discovery(domain)) as DiscoveryRecord;
}

const bimiAsset = (r: DiscoveryRecord) => r.assets.find((a) => a.origin === "bimi");

describe("BIMI records and DNS", () => {
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

  test("TXT over the system resolver, pointed at a UDP DNS server on loopback", async () => {
    const dns = await startUdpDns(RECORDS);
    try {
      const txt = systemTxt([dns.server]);
      expect(await txt("default._bimi.bimi-only.test")).toEqual(bimi(LOGO));
      expect(await txt("default._bimi.nothing.test")).toEqual([]);
      expect(dns.asked).toContain("default._bimi.bimi-only.test");
    } finally {
      await dns.stop();
    }
  });

  test("TXT over DoH (RFC 8484 GET, dns-packet messages), through the forward proxy", async () => {
    const f = new GuardedFetcher({ userAgent: "test", proxy: web.proxyUrl, allowLoopback: true });
    f.resolve = web.resolve;
    const txt = dohTxt("http://doh.test/dns-query", f);
    expect(await txt("default._bimi.bimi-verified.test")).toEqual(
      RECORDS["default._bimi.bimi-verified.test"] as string[],
    );
    expect(await txt("default._bimi.nothing.test")).toEqual([]);
    expect(web.proxied.some((l) => l.startsWith("GET http://doh.test/dns-query?dns="))).toBe(true);
  });
});

describe("mark certificates in discovery (DISCOVERY_VMC_ROOTS, DoH)", () => {
  test("a certificate from a trusted root, valid, for the domain, hashing to the logo: a verified mark", async () => {
    const r = await discovered("bimi-verified.test");
    expect(r.status).toBe("found");
    expect(r.bimi).toMatchObject({
      logo: LOGO,
      certificate: pemUrl("verified"),
      verifiedMark: true,
      failed: [],
      organization: "Verified Widgets Inc",
    });
    expect(bimiAsset(r)).toMatchObject({
      variant: "icon",
      provenance: "bimi-verified",
      verifiedMark: true,
      sourceUrl: LOGO,
    });
    // the BIMI tile is the icon; the site's own square artwork stays the colour variant
    expect(r.variants.icon?.source).toBe("web:bimi-vmc:svg");
    expect(r.assets.find((a) => a.variant === "color")?.origin).toBe("apple-touch-icon");
    expect(dohAsked).toContain("default._bimi.bimi-verified.test");
    // the public API says where each variant came from
    const brand = (await (await t.get("/v1/brand?domain=bimi-verified.test", key)).json()) as {
      slug: string;
      verified: boolean;
      provenance: Record<string, string>;
    };
    expect(brand.provenance).toMatchObject({ icon: "bimi-verified", color: "website-http" });
    // the fixture site's own page answered over plain http: never verified
    expect(brand.verified).toBe(false);
    const icon = await t.get(`/v1/svg/${brand.slug}?variant=icon`, key);
    expect(icon.headers.get("x-svg-variant")).toBe("icon");
    expect(icon.headers.get("x-asset-provenance")).toBe("bimi-verified");
    const catalog = (await (await t.get(`/v1/catalog/${brand.slug}`, key)).json()) as {
      provenance: Record<string, string>;
    };
    expect(catalog.provenance.icon).toBe("bimi-verified");
  });

  const refusals: [Certified, string, RegExp][] = [
    ["otherdomain", "domain", /names someone-else\.test, not bimi-otherdomain\.test/],
    ["expired", "validity", /expired on 2031-03-14/],
    ["notyet", "validity", /not valid before 2031-03-17/],
    ["selfsigned", "self_signed", /signed itself/],
    ["nousage", "usage", /BIMI extended key usage/],
    ["mismatch", "hash", /does not match the SVG served at l=/],
    ["untrusted", "chain", /does not chain to a trusted mark certificate root/],
  ];
  for (const [c, check, reason] of refusals)
    test(`refused, named in the record: ${c} (${check})`, async () => {
      const r = await discovered(`bimi-${c}.test`);
      expect(r.status).toBe("found");
      expect(r.bimi?.verifiedMark).toBe(false);
      expect(r.bimi?.failed.map((f) => f.check)).toEqual([check]);
      expect(r.bimi?.failed[0]?.reason).toMatch(reason);
      // the logo is still the brand's BIMI logo, without a verified mark
      expect(bimiAsset(r)).toMatchObject({ provenance: "bimi", verifiedMark: false });
      expect(r.variants.icon?.source).toBe("web:bimi:svg");
    });

  test("a certificate that cannot be fetched is named too", async () => {
    const r = await discovered("bimi-nopem.test");
    expect(r.bimi?.failed).toEqual([{ check: "certificate", reason: "not fetched: HTTP 404" }]);
    expect(bimiAsset(r)?.provenance).toBe("bimi");
  });

  test("a record without a certificate: the logo, no verified mark", async () => {
    const r = await discovered("bimi-only.test");
    expect(r.status).toBe("found");
    expect(bimiAsset(r)).toMatchObject({ variant: "icon", provenance: "bimi", kind: "svg" });
    expect(bimiAsset(r)?.verifiedMark).toBeUndefined();
    expect(r.bimi).toMatchObject({ certificate: null, verifiedMark: false, failed: [] });
    // sanitized like any SVG: what is served is not the file as fetched
    expect(r.variants.icon?.svg).toContain("<path");
  });

  test("BIMI is read when the home page fails: the verified mark names the brand, its tile is icon and colour", async () => {
    const r = await discovered("bimi-wall.test");
    expect(r.status).toBe("found");
    expect(r.name).toBe("Walled Garden Bank");
    expect(r.created).toBe(true);
    expect(Object.keys(r.variants).sort()).toEqual(["color", "icon"]);
    expect(r.assets.every((a) => a.provenance === "bimi-verified")).toBe(true);
    const brand = (await (await t.get("/v1/brand?domain=bimi-wall.test", key)).json()) as {
      name: string;
      variants: string[];
      verified: boolean;
      provenance: Record<string, string>;
    };
    expect(brand.name).toBe("Walled Garden Bank");
    // a square tile with its own background is not served as the dark or light variant
    expect(brand.variants).toEqual(["color", "icon"]);
    expect(brand.provenance).toEqual({ color: "bimi-verified", icon: "bimi-verified" });
    expect(brand.verified).toBe(true);
  });

  test("a record pointing at a private address is refused before the proxy sees it", async () => {
    const before = web.proxied.length;
    const r = await discovered("bimi-private.test");
    expect(r.status).toBe("refused");
    expect(r.reason).toMatch(/10\.9\.8\.7 is private/);
    expect(web.proxied.slice(before).some((l) => l.includes("intranet"))).toBe(false);
  });

  test("an oversized or wide SVG is not used (and says why): the page's icon is", async () => {
    for (const d of ["bimi-huge.test", "bimi-wide.test"]) {
      const r = await discovered(d);
      expect(r.status).toBe("found");
      expect(r.assets[0]?.origin).toBe("apple-touch-icon");
      expect(r.variants.icon).toBeUndefined();
      expect(r.bimi?.unusable).toMatch(/over|not square/);
    }
  });

  test("operators see each record's BIMI checks (GET /admin/discoveries, checked against its schema)", async () => {
    const r = await t.req("/admin/discoveries?limit=100", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(r.status).toBe(200);
    const { items } = (await r.json()) as { items: DiscoveryRecord[] };
    const byDomain = new Map(items.map((i) => [i.domain, i]));
    expect(byDomain.get("bimi-verified.test")?.bimi?.verifiedMark).toBe(true);
    expect(byDomain.get("bimi-mismatch.test")?.bimi?.failed[0]?.check).toBe("hash");
  });

  test("a DISCOVERY_VMC_ROOTS file without a certificate stops the start", async () => {
    const file = join(tempDir(), "no-roots.pem");
    writeFileSync(file, "# nothing here\n");
    const failed = await makeApp({ DISCOVERY: "on", DISCOVERY_VMC_ROOTS: file }).catch((e) => e);
    expect(String(failed)).toMatch(/DISCOVERY_VMC_ROOTS .* holds no PEM certificate/);
  });
});
