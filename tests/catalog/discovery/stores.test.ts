/**
 * Discovery on both stores: the admin CLI's bulk run (embedded, in-process, same code as
 * `npm run admin -- discover`), and on MongoDB (FerretDB): discovered artwork served by a
 * second instance on the same database and after a restart; a takedown seen by both.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { MongoClient } from "mongodb";
import { discoveryHooks } from "../../../src/catalog/discovery/cli";
import type { Deps } from "../../../src/deps";
import { openMongoStore } from "../../../src/deps";
import { setLogLevel } from "../../../src/platform/log";
import { cliInProcess } from "../../support/admin-cli";
import { ADMIN_TOKEN, CATALOG_FILE, makeApp, type TestApp, tempDir } from "../../support/app";
import { smallCatalogFile } from "../../support/catalog";
import { logoSites, SSRF_DNS } from "../../support/logo-sites";
import { mongoUrl, skipNote, testDbName } from "../../support/mongo";
import { describeUnless } from "../../support/skip";
import { type FixtureWeb, startFixtureWeb } from "../../support/web-fixtures";

setDefaultTimeout(60_000);
let web: FixtureWeb;
const discoveryEnv = () => ({
  DISCOVERY: "on",
  DISCOVERY_PROXY: web.proxyUrl,
  DISCOVERY_ALLOW_PRIVATE: "on",
});
const useFixtures = (deps: Deps) => {
  deps.discovery.fetcher.resolve = web.resolve;
  deps.discovery.txt = web.resolveTxt;
  deps.discovery.fetcher.requestTimeoutMs = 1000;
};

beforeAll(async () => {
  setLogLevel("error");
  web = await startFixtureWeb(await logoSites(), SSRF_DNS);
});
afterAll(async () => {
  await web?.stop();
  setLogLevel("info");
});

/** The CLI in this process, discovery's DNS pointed at the fixtures. */
async function cli(args: string[], env: Record<string, string>) {
  discoveryHooks.configure = (d) => {
    d.fetcher.resolve = web.resolve;
    d.txt = web.resolveTxt;
    d.fetcher.requestTimeoutMs = 1000;
  };
  try {
    return await cliInProcess(args, env);
  } finally {
    discoveryHooks.configure = undefined;
  }
}

describe("admin CLI discover (embedded store)", () => {
  test("--report prints every candidate, the chosen one and why the others lost", async () => {
    const env = { DATA_DIR: tempDir(), CATALOG_FILE, LOG_LEVEL: "error", ...discoveryEnv() };
    const run = await cli(["discover", "--report", "webmanifest.test", "svgicon.test"], env);
    expect(run.code).toBe(0);
    const [manifest = "", svg = ""] = run.out.split(/\n\n/);
    const row = (table: string, origin: string) =>
      table.split("\n").find((l) => l.trimStart().startsWith(`${origin} `)) ?? "";
    expect(manifest).toMatch(/^webmanifest\.test {2}found {2}manifest-motors/);
    expect(row(manifest, "manifest")).toMatch(/chosen: color .*android-chrome-512x512\.png$/);
    expect(row(manifest, "apple-touch-icon-root")).toMatch(
      /not fetched: a 512x512 raster was found first/,
    );
    expect(svg).toMatch(/^svgicon\.test {2}found/);
    expect(row(svg, "link-icon-svg")).toMatch(/chosen: color, mono/);
    expect(row(svg, "favicon.ico")).toMatch(/not fetched: a vector was found first/);
  });

  test("a bulk run prints a summary table, is resumable, and a running service picks the results up", async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, CATALOG_FILE, LOG_LEVEL: "error", ...discoveryEnv() };
    const off = await cli(["discover", "svgicon.test"], { ...env, DISCOVERY: "off" });
    expect(off.code).toBe(1);

    const file = `${dataDir}/domains.txt`;
    await Bun.write(file, "# fixtures\nfaviconly.test\nparked.test\nto-private.test\nslow.test\n");
    const run = await cli(["discover", "svgicon.test", "touchicon.test", "--file", file], env);
    expect(run.code).toBe(0);
    const row = (label: string) =>
      Number(new RegExp(`^${label}\\s+(\\d+)$`, "m").exec(run.out)?.[1]);
    expect(row("found vector")).toBe(1);
    expect(row("found raster")).toBe(2);
    expect(row("nothing")).toBe(1);
    expect(row("refused")).toBe(1);
    expect(row("failed")).toBe(1);
    expect(row("total")).toBe(6);

    // resumable: a second run fetches nothing
    const before = web.proxied.length;
    const again = await cli(["discover", "svgicon.test", "--file", file], env);
    expect(again.code).toBe(0);
    expect(web.proxied.length).toBe(before);

    const list = await cli(["discoveries", "list", "--status", "found"], env);
    const found = JSON.parse(list.out) as { domain: string; assets: { sourceUrl: string }[] }[];
    expect(found.map((r) => r.domain).sort()).toEqual([
      "faviconly.test",
      "svgicon.test",
      "touchicon.test",
    ]);

    const t = await makeApp({ DATA_DIR: dataDir });
    try {
      const key = await t.key("internal");
      const b = await t.get("/v1/brand?domain=svgicon.test", key);
      expect(b.status).toBe(200);
      const slug = ((await b.json()) as { slug: string }).slug;
      expect((await t.get(`/v1/svg/${slug}`, key)).headers.get("x-svg-variant")).toBe("mono");
      // a takedown by the CLI reaches the running service through its poll of the store
      expect((await cli(["discoveries", "takedown", "svgicon.test"], env)).code).toBe(0);
      await t.deps.enrichment.pollDiscoveries();
      expect((await t.get("/v1/brand?domain=svgicon.test", key)).status).toBe(404);
    } finally {
      await t.close();
    }
  }, 300_000);
});

const mongo = await mongoUrl();

describeUnless(mongo.reason)(`discovery on MongoDB ${skipNote(mongo)}`.trim(), () => {
  const dbName = testDbName("bapi_discovery");
  let client: MongoClient;
  const mongoApp = async (env: Record<string, string> = {}) => {
    // the small real catalog: discovery adds brands to whatever catalog it has
    const store = await openMongoStore(
      { CATALOG_FILE: smallCatalogFile(), MONGODB_DB: dbName },
      mongo.url as string,
    );
    return makeApp(env, { store, customize: useFixtures });
  };
  afterAll(async () => {
    await client?.db(dbName).dropDatabase();
    await client?.close();
  });

  test("found by one instance, served by a second and after a restart; takedown reaches both", async () => {
    const { MongoClient } = await import("mongodb");
    client = await MongoClient.connect(mongo.url as string);
    const a: TestApp = await mongoApp(discoveryEnv());
    const b: TestApp = await mongoApp();
    let kept = "";
    try {
      const ka = await a.key("internal");
      const kb = await b.key("internal");
      for (const d of ["touchicon.test", "faviconly.test"])
        expect((await a.get(`/v1/brand?domain=${d}`, ka)).status).toBe(404);
      await a.deps.discovery.idle();
      await a.deps.enrichment.idle();
      const found = await a.get("/v1/brand?domain=touchicon.test", ka);
      expect(found.status).toBe(200);
      const slug = ((await found.json()) as { slug: string }).slug;
      kept = (
        (await (await a.get("/v1/brand?domain=faviconly.test", ka)).json()) as { slug: string }
      ).slug;
      const doc = await client
        .db(dbName)
        .collection("discoveries")
        .findOne({ _id: "touchicon.test" as never });
      expect(doc?.status).toBe("found");
      expect(doc?.assets?.[0]?.origin).toBe("apple-touch-icon");

      // the second instance (DISCOVERY off) sees it on its next poll
      await b.deps.enrichment.pollDiscoveries();
      const seen = await b.get(`/v1/svg/${slug}?variant=color`, kb);
      expect(seen.status).toBe(200);
      expect(seen.headers.get("x-svg-variant")).toBe("color");

      // the takedown on the operator route of one instance reaches the other
      const down = await a.req("/admin/discoveries/touchicon.test", {
        method: "DELETE",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(down.status).toBe(200);
      await b.deps.enrichment.pollDiscoveries();
      expect((await b.get(`/v1/svg/${slug}`, kb)).status).toBe(404);
    } finally {
      await a.deps.close();
      await b.deps.close();
    }
    // a restart: the taken-down brand stays gone, the other is served from MongoDB
    const c = await mongoApp(discoveryEnv());
    try {
      const kc = await c.key("internal");
      expect((await c.get("/v1/brand?domain=touchicon.test", kc)).status).toBe(404);
      await c.deps.discovery.idle();
      expect((await c.get("/v1/brand?domain=touchicon.test", kc)).status).toBe(404);
      const svg = await c.get(`/v1/svg/${kept}?variant=color`, kc);
      expect(svg.status).toBe(200);
      expect(svg.headers.get("x-svg-variant")).toBe("color");
    } finally {
      await c.deps.close();
    }
  }, 300_000);
});
