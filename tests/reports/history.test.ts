/**
 * Pins, the audit trail and reports on both stores (embedded SQLite and MongoDB through
 * FerretDB), through the real app:
 *  - a pin of a brand's mark replaces every variant of its own artwork (mono included) unless
 *    kept or pinned separately; a pin removes a variant; pins hold across a catalog rebuild,
 *    a restart and a forced rediscovery; a rebuild that retires a pinned brand moves the pin to
 *    the brand its slug redirects to, or reports it (queue and trail);
 *  - the trail names each operator by their token, keeps the value before and after, records
 *    a build's per-brand changes and discovery's stored, refreshed and refused artwork, pages
 *    by cursor, and is append-only (SQLite triggers; MongoDB sees inserts only);
 *  - reports: one vote per account, filings joined by brand and kind, a missing company by
 *    domain (discovery queued when on), and GET /v1/reports for the caller's own.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Collection } from "mongodb";
import type { BuiltCatalog, Variant } from "../../src/catalog/built-catalog";
import type { MongoCatalogSource } from "../../src/catalog/store/mongo";
import { openEmbeddedStore, openMongoStore, type Store } from "../../src/deps";
import { setLogLevel } from "../../src/platform/log";
import { ADMIN_TOKEN, makeApp, type TestApp, tempDir, testConfig } from "../support/app";
import { smallCatalogFile } from "../support/catalog";
import { ICON_SVG, TWO_COLOUR_SVG } from "../support/logo-sites";
import { mongoUrl, skipNote, testDbName } from "../support/mongo";
import { describeUnless } from "../support/skip";
import {
  bytes,
  type FixtureWeb,
  fixtureDiscoveryEnv,
  html,
  redirect,
  startFixtureWeb,
  useFixtureWeb,
} from "../support/web-fixtures";

setDefaultTimeout(120_000);
const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef01";
const VARIANTS: Variant[] = ["color", "mono", "dark", "light", "icon", "wordmark"];
const RED_SVG = ICON_SVG; // a single-colour mark (#e4002b)
const BLUE_SVG = ICON_SVG.replace("#e4002b", "#1245ab");

let web: FixtureWeb;
const icon = { svg: RED_SVG };
beforeAll(async () => {
  setLogLevel("error");
  const page = (title: string) =>
    html(
      `<!doctype html><title>${title}</title><link rel="icon" type="image/svg+xml" href="/icon.svg">`,
    );
  web = await startFixtureWeb(
    {
      "rebrand.test": {
        "/": page("Rebrand Co | Home"),
        "/icon.svg": () => new Response(icon.svg, { headers: { "content-type": "image/svg+xml" } }),
      },
      "newco.test": {
        "/": page("Newco | Home"),
        "/icon.svg": bytes(TWO_COLOUR_SVG, "image/svg+xml"),
      },
      "to-private.test": { "/": redirect("http://intranet.to-private.test/") },
    },
    { "intranet.to-private.test": ["10.20.30.40"] },
  );
});
afterAll(async () => {
  await web?.stop();
  setLogLevel("info");
});

const mongo = await mongoUrl();

interface Kind {
  name: string;
  skip: boolean;
  /** the environment of a store of its own (a DATA_DIR; a MongoDB database) on a catalog file */
  env(catalogFile: string): Record<string, string>;
  open(env: Record<string, string>): Promise<Store>;
  /** a new build of the catalog file, loaded by the running instance `t` */
  rebuild(t: TestApp, store: Store, file: string, built: BuiltCatalog): Promise<void>;
}

const KINDS: Kind[] = [
  {
    name: "embedded SQLite",
    skip: false,
    env: (file) => ({ CATALOG_FILE: file, DATA_DIR: tempDir() }),
    open: async (env) => openEmbeddedStore(testConfig(env)),
    rebuild: async (t, _store, file, built) => {
      writeFileSync(file, JSON.stringify(built));
      await t.deps.catalog.load();
    },
  },
  {
    name: "MongoDB",
    skip: !mongo.url,
    env: (file) => ({
      CATALOG_FILE: file,
      DATA_DIR: tempDir(),
      MONGODB_DB: testDbName("bapi_hist"),
    }),
    open: (env) => openMongoStore(testConfig(env), mongo.url as string),
    rebuild: async (t, store, file, built) => {
      writeFileSync(file, JSON.stringify(built));
      await (store.catalog as MongoCatalogSource).seed(built);
      await t.deps.catalog.load();
    },
  },
];

/** A copy of the small catalog in a file of its own (rewritten by rebuilds). */
function catalogCopy(): { file: string; built: BuiltCatalog } {
  const file = join(tempDir("bapi-hist-"), "catalog.json");
  copyFileSync(smallCatalogFile(), file);
  return { file, built: JSON.parse(readFileSync(file, "utf8")) as BuiltCatalog };
}

/** The next build: `retire` brands (redirected to another slug, or not), `rename` others. */
function nextBuild(
  built: BuiltCatalog,
  change: { retire: [string, string | null][]; rename: [string, string][] },
): BuiltCatalog {
  const gone = new Map(change.retire);
  const brands = built.brands
    .filter((b) => !gone.has(b.slug))
    .map((b) => {
      const formerSlugs = [...gone].filter(([, to]) => to === b.slug).map(([from]) => from);
      const name = change.rename.find(([slug]) => slug === b.slug)?.[1] ?? b.name;
      return formerSlugs.length ? { ...b, name, formerSlugs } : { ...b, name };
    });
  return { version: `${built.version}-next`, builtAt: new Date().toISOString(), brands };
}

/** Slugs of brands with all six variants, for pins whose effect on every variant shows. */
const fullBrands = (built: BuiltCatalog) =>
  built.brands.filter((b) => VARIANTS.every((v) => b.variants[v])).map((b) => b.slug);

async function instance(kind: Kind, env: Record<string, string>) {
  const store = await kind.open(env);
  const t = await makeApp(
    { ...env, ...fixtureDiscoveryEnv(web), ADMIN_TOKENS: `alice:${ALICE},bob:${BOB}` },
    { store, customize: useFixtureWeb(web) },
  );
  return { t, store };
}

const as = (t: TestApp, token: string, path: string, init: RequestInit = {}) =>
  t.req(path, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
const json = (t: TestApp, token: string, method: string, path: string, body?: unknown) =>
  as(t, token, path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const putSvg = (t: TestApp, token: string, slug: string, variant: string, svg: string, q = "") =>
  as(t, token, `/admin/brands/${slug}/artwork/${variant}${q}`, {
    method: "PUT",
    headers: { "content-type": "image/svg+xml" },
    body: svg,
  });

/** What a key is served for each variant: the variant named in X-Svg-Variant and the bytes. */
async function served(t: TestApp, key: string, slug: string) {
  const out: Record<string, { variant: string | null; svg: string }> = {};
  for (const v of VARIANTS) {
    const r = await t.get(`/v1/svg/${slug}?variant=${v}`, key);
    expect(r.status).toBe(200);
    out[v] = { variant: r.headers.get("x-svg-variant"), svg: await r.text() };
  }
  return out;
}

interface Event {
  id: string;
  type: string;
  by: string;
  slug: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  detail: Record<string, unknown>;
}

/** A brand's whole trail, read a page of `limit` at a time by cursor. */
async function trail(t: TestApp, slug: string, limit = 100): Promise<Event[]> {
  const all: Event[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const r = await as(
      t,
      ADMIN_TOKEN,
      `/admin/brands/${slug}/audit?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
    );
    expect(r.status).toBe(200);
    const page = (await r.json()) as { items: Event[]; next: string | null };
    all.push(...page.items);
    cursor = page.next;
    if (!cursor) return all;
  }
  throw new Error("the trail did not end");
}

/** MongoDB driver calls that change or remove documents: none may reach audit_events. */
const CHANGES = [
  "updateOne",
  "updateMany",
  "replaceOne",
  "findOneAndUpdate",
  "findOneAndReplace",
  "findOneAndDelete",
  "deleteOne",
  "deleteMany",
  "bulkWrite",
  "drop",
] as const;

/** Counts the driver calls on audit_events by method while `f` runs (real calls, observed). */
async function auditCalls(f: () => Promise<void>): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  const proto = Collection.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const saved = new Map<string, (...a: unknown[]) => unknown>();
  for (const m of [...CHANGES, "insertOne", "insertMany"]) {
    const original = proto[m] as (...a: unknown[]) => unknown;
    saved.set(m, original);
    proto[m] = function (this: Collection, ...a: unknown[]) {
      // insertMany is a bulkWrite of insertOne operations: those count as inserts
      const inserts =
        m === "bulkWrite" && (a[0] as object[]).every((op) => Object.keys(op)[0] === "insertOne");
      if (this.collectionName === "audit_events" && !inserts) calls[m] = (calls[m] ?? 0) + 1;
      return original.apply(this, a);
    };
  }
  try {
    await f();
  } finally {
    for (const [m, original] of saved) proto[m] = original;
  }
  return calls;
}

for (const kind of KINDS) {
  describeUnless(kind.skip ? mongo.reason : undefined)(
    `pins, audit and reports on ${kind.name} ${kind.skip ? skipNote(mongo) : ""}`.trim(),
    () => {
      test("a pin replaces the brand's own artwork everywhere and holds across a rebuild, a restart and a forced rediscovery; retired pinned brands move or are reported", async () => {
        const { file, built } = catalogCopy();
        const [mark, kept, removal, retired, target, orphan, clash, clashTarget, renamed] =
          fullBrands(built) as string[];
        const env = kind.env(file);
        let { t, store } = await instance(kind, env);
        try {
          const key = await t.key("internal");
          const free = await t.key("free");

          // the mark: a multi-colour color pin; no variant shows the old artwork any more
          const before = await served(t, key, mark as string);
          expect((await putSvg(t, ALICE, mark as string, "color", TWO_COLOUR_SVG)).status).toBe(
            200,
          );
          const after = await served(t, key, mark as string);
          const old = new Set(Object.values(before).map((s) => s.svg));
          for (const v of VARIANTS) expect(old.has(after[v]?.svg as string)).toBe(false);
          expect(after.color?.variant).toBe("color");
          // no mono can be made from multi-colour artwork: mono, icon and wordmark fall back to it
          for (const v of ["mono", "icon", "wordmark"]) expect(after[v]?.variant).toBe("color");
          const freeMono = await t.get(`/v1/svg/${mark}`, free);
          expect(freeMono.headers.get("x-svg-variant")).toBe("placeholder");
          const view = (await (await t.get(`/v1/catalog/${mark}`, key)).json()) as {
            artwork: { source: string; variants: string[] }[];
          };
          expect(view.artwork).toEqual([expect.objectContaining({ source: "pin" })]);

          // a single-colour mono pin keeping the brand's own wordmark
          const keptBefore = await served(t, key, kept as string);
          const keep = await putSvg(t, BOB, kept as string, "mono", RED_SVG, "?keep=wordmark");
          expect(keep.status).toBe(200);
          expect(((await keep.json()) as { value: { keep: string[] } }).value.keep).toEqual([
            "wordmark",
          ]);
          const keptAfter = await served(t, key, kept as string);
          expect(keptAfter.wordmark).toEqual(keptBefore.wordmark as (typeof keptAfter)["wordmark"]);
          expect(keptAfter.mono?.svg).toContain("#000");
          for (const v of ["color", "icon"]) expect(keptAfter[v]?.variant).toBe("mono");
          for (const v of ["color", "mono", "dark", "light", "icon"])
            expect(keptAfter[v]?.svg).not.toBe(keptBefore[v]?.svg);
          expect(
            (await putSvg(t, BOB, kept as string, "icon", RED_SVG, "?keep=wordmark")).status,
          ).toBe(400);

          // a pin that removes a variant
          const rm = await json(t, ALICE, "PUT", `/admin/brands/${removal}/artwork/wordmark`, {
            remove: true,
          });
          expect(rm.status).toBe(200);
          expect(((await rm.json()) as { value: unknown }).value).toEqual({ removed: true });
          const removed = await t.get(`/v1/svg/${removal}?variant=wordmark`, key);
          expect(removed.headers.get("x-svg-variant")).not.toBe("wordmark");

          // pins on brands the next build retires, and a conflict
          await putSvg(t, ALICE, retired as string, "color", BLUE_SVG);
          expect(
            (await json(t, BOB, "PATCH", `/admin/brands/${orphan}`, { name: "Orphan Inc" })).status,
          ).toBe(200);
          await putSvg(t, ALICE, clash as string, "color", BLUE_SVG);
          await putSvg(t, BOB, clashTarget as string, "color", RED_SVG);
          const clashTargetSvg = (await served(t, key, clashTarget as string)).color?.svg;

          // a forced rediscovery does not move a pin on a discovered brand
          const found = (await (
            await json(t, ALICE, "POST", "/admin/discoveries", { domains: ["rebrand.test"] })
          ).json()) as { results: { slug: string; status: string }[] };
          expect(found.results[0]?.status).toBe("found");
          const rebrand = found.results[0]?.slug as string;
          const discovered = (await served(t, key, rebrand)).color?.svg;
          expect((await putSvg(t, ALICE, rebrand, "color", TWO_COLOUR_SVG)).status).toBe(200);
          const pinnedRebrand = (await served(t, key, rebrand)).color?.svg;
          icon.svg = BLUE_SVG; // the site changes its logo
          expect(
            (await as(t, ALICE, "/admin/discoveries/rebrand.test/rediscover", { method: "POST" }))
              .status,
          ).toBe(200);
          expect((await served(t, key, rebrand)).color?.svg).toBe(pinnedRebrand as string);

          // the rebuild, loaded in place
          const next = nextBuild(built, {
            retire: [
              [retired as string, target as string],
              [orphan as string, null],
              [clash as string, clashTarget as string],
            ],
            rename: [[renamed as string, "Renamed Brand"]],
          });
          const markPinned = (await served(t, key, mark as string)).color?.svg;
          await kind.rebuild(t, store, file, next);
          await t.deps.corrections.settled();
          await t.deps.close();

          // a restart on the same store
          ({ t, store } = await instance(kind, env));
          const key2 = await t.key("internal");
          expect((await served(t, key2, mark as string)).color?.svg).toBe(markPinned as string);
          expect((await served(t, key2, rebrand)).color?.svg).toBe(pinnedRebrand as string);
          // the retired brand's pin moved to the brand its slug answers with
          const moved = await t.get(`/v1/svg/${retired}?variant=color`, key2);
          expect(await moved.text()).toContain("1245ab");
          expect((await t.get(`/v1/svg/${target}?variant=color`, key2)).status).toBe(200);
          const pins = (
            (await (await as(t, ADMIN_TOKEN, "/admin/pins")).json()) as {
              items: { slug: string; field: string; by: string; why: string | null }[];
            }
          ).items;
          expect(pins).toContainEqual(
            expect.objectContaining({ slug: target, field: "artwork:color", by: "admin:alice" }),
          );
          expect(pins.find((p) => p.slug === target)?.why).toContain(`moved from ${retired}`);
          // the conflict: the target keeps its own pin; the retired one stays and is reported
          expect((await served(t, key2, clashTarget as string)).color?.svg).toBe(
            clashTargetSvg as string,
          );
          expect(pins).toContainEqual(
            expect.objectContaining({ slug: clash, field: "artwork:color" }),
          );
          const queue = (
            (await (await as(t, ADMIN_TOKEN, "/admin/reports?status=open")).json()) as {
              items: { kind: string; slug: string; accountId: string; notes: { text: string }[] }[];
            }
          ).items.filter((r) => r.kind === "pin_orphaned");
          expect(queue.map((r) => r.slug).sort()).toEqual([clash, orphan].sort() as string[]);
          expect(queue.every((r) => r.accountId === "system")).toBe(true);
          expect(queue.find((r) => r.slug === orphan)?.notes[0]?.text).toContain(
            "without a redirect",
          );
          // an orphaned pin is removed by its own slug, not the target's
          expect(
            (await as(t, ADMIN_TOKEN, `/admin/brands/${clash}/artwork/color`, { method: "DELETE" }))
              .status,
          ).toBe(200);
          expect((await served(t, key2, clashTarget as string)).color?.svg).toBe(
            clashTargetSvg as string,
          );
          expect(
            (await json(t, ADMIN_TOKEN, "PATCH", `/admin/brands/${orphan}`, { name: null })).status,
          ).toBe(200);

          // the trails
          const retiredTrail = await trail(t, retired as string, 2);
          const types = retiredTrail.map((e) => `${e.slug}:${e.type}`);
          expect(types).toContain(`${retired}:catalog_changed`);
          expect(types).toContain(`${retired}:pin_moved`);
          expect(types).toContain(`${target}:pin_moved`);
          const retirement = retiredTrail.find(
            (e) => e.type === "catalog_changed" && e.slug === retired,
          );
          expect(retirement).toMatchObject({
            by: "catalog",
            after: null,
            detail: { change: "retired", redirect: target },
          });
          expect(Object.keys(retirement?.before?.variants as object).sort()).toEqual(
            [...VARIANTS].sort(),
          );
          const orphanTrail = await trail(t, orphan as string);
          expect(orphanTrail.map((e) => e.type)).toEqual([
            "pin_removed",
            "pin_orphaned",
            "catalog_changed",
            "pin_set",
          ]);
          expect(orphanTrail[1]).toMatchObject({
            by: "system",
            detail: { field: "name", redirect: null },
          });
          const rename = (await trail(t, renamed as string)).find(
            (e) => e.type === "catalog_changed",
          );
          expect(rename).toMatchObject({
            before: { name: built.brands.find((b) => b.slug === renamed)?.name },
            after: { name: "Renamed Brand" },
            detail: {
              change: "changed",
              fields: "name",
              version: next.version,
              previous: built.version,
            },
          });
          // discovery: stored, then refreshed with different artwork under the pin
          const discovery = (await trail(t, rebrand)).filter((e) => e.type.startsWith("discovery"));
          expect(discovery.map((e) => e.type)).toEqual(["discovery_refreshed", "discovery_stored"]);
          expect(discovery[0]?.before?.variants).toEqual(discovery[1]?.after?.variants as object);
          expect(discovery[0]?.after?.variants).not.toEqual(
            discovery[0]?.before?.variants as object,
          );
          // unpinned, the refreshed artwork shows
          await as(t, ADMIN_TOKEN, `/admin/brands/${rebrand}/artwork/color`, { method: "DELETE" });
          const now = (await served(t, key2, rebrand)).color?.svg;
          expect(now).not.toBe(discovered as string);
          expect(now).toContain("1245ab");
        } finally {
          icon.svg = RED_SVG;
          await t.deps.close();
        }
      });

      test("the trail: each operator by name, the value before and after, discovery and takedown, pages by cursor, append-only", async () => {
        const { file, built } = catalogCopy();
        const [slug] = fullBrands(built) as string[];
        const { t, store } = await instance(kind, kind.env(file));
        try {
          const calls = await auditCalls(async () => {
            const key = await t.key("internal");
            const own = (await served(t, key, slug as string)).color?.svg as string;
            expect((await putSvg(t, ALICE, slug as string, "color", RED_SVG)).status).toBe(200);
            expect((await putSvg(t, BOB, slug as string, "color", BLUE_SVG)).status).toBe(200);
            const removed = await as(t, ADMIN_TOKEN, `/admin/brands/${slug}/artwork/color`, {
              method: "DELETE",
            });
            expect(removed.status).toBe(200);
            expect((await served(t, key, slug as string)).color?.svg).toBe(own);
            const filed = (await (
              await t.post("/v1/reports", key, { slug, kind: "outdated" })
            ).json()) as { id: string };
            expect((await json(t, ALICE, "POST", `/admin/reports/${filed.id}/reject`)).status).toBe(
              200,
            );
            // a discovery refused for the brand (its pinned domain redirects to a private address)
            await json(t, BOB, "PATCH", `/admin/brands/${slug}`, { domains: ["to-private.test"] });
            const refused = (await (
              await json(t, BOB, "POST", "/admin/discoveries", { domains: ["to-private.test"] })
            ).json()) as { results: { status: string }[] };
            expect(refused.results[0]?.status).toBe("refused");
            // a discovered brand taken down by an operator
            const found = (await (
              await json(t, ALICE, "POST", "/admin/discoveries", { domains: ["rebrand.test"] })
            ).json()) as { results: { slug: string }[] };
            const rebrand = found.results[0]?.slug as string;
            expect(
              (await as(t, BOB, "/admin/discoveries/rebrand.test", { method: "DELETE" })).status,
            ).toBe(200);

            const events = await trail(t, slug as string);
            expect(events.map((e) => `${e.type} ${e.by}`)).toEqual([
              "discovery_refused discovery",
              "pin_set admin:bob",
              "report_rejected admin:alice",
              expect.stringMatching(/^pin_removed admin:token-[0-9a-f]{8}$/),
              "pin_replaced admin:bob",
              "pin_set admin:alice",
            ]);
            const [refusal, , rejected, unpinned, replaced, set] = events as Event[];
            expect(refusal?.after).toMatchObject({ status: "refused" });
            expect(String(refusal?.after?.reason)).toContain("10.20.30.40");
            expect(rejected).toMatchObject({
              before: { status: "open" },
              after: { status: "rejected" },
              detail: { report: filed.id, kind: "outdated" },
            });
            const catalogColor = built.brands.find((b) => b.slug === slug)?.variants.color;
            expect(set?.before).toEqual({
              sha256: catalogColor?.sha256,
              source: catalogColor?.source,
            });
            expect(set?.after).toMatchObject({ origin: "upload", by: "admin:alice" });
            expect(replaced?.before).toEqual(set?.after as Record<string, unknown>);
            expect(replaced?.after).toMatchObject({ by: "admin:bob" });
            expect(replaced?.after?.sha256).not.toBe(set?.after?.sha256);
            expect(unpinned?.before).toEqual(replaced?.after as Record<string, unknown>);
            expect(unpinned?.after).toEqual(set?.before as Record<string, unknown>);
            // pages of one event each read the same trail
            expect((await trail(t, slug as string, 1)).map((e) => e.id)).toEqual(
              events.map((e) => e.id),
            );
            const bad = await as(t, ADMIN_TOKEN, `/admin/brands/${slug}/audit?cursor=x`);
            expect(bad.status).toBe(422);

            const gone = await trail(t, rebrand);
            expect(gone.map((e) => `${e.type} ${e.by}`)).toEqual([
              "takedown admin:bob",
              "discovery_stored discovery",
            ]);
            expect(gone[0]?.before).toMatchObject({ status: "found" });
            expect(gone[0]?.after).toMatchObject({ status: "taken_down", variants: {} });
          });
          if (store.db) {
            // SQLite: triggers refuse to change or remove an event, and a replacement is skipped
            const db = store.db;
            const first = db.get<{ id: string; record: string }>(
              "SELECT id, record FROM audit_events ORDER BY id LIMIT 1",
            );
            expect(() => db.run("UPDATE audit_events SET type = 'x'")).toThrow("append-only");
            expect(() => db.run("DELETE FROM audit_events")).toThrow("append-only");
            db.run(
              "INSERT OR REPLACE INTO audit_events (id, brand_id, slug, type, record) VALUES (?, 1, 'x', 'x', '{}')",
              first?.id as string,
            );
            expect(
              db.get("SELECT id, record FROM audit_events WHERE id = ?", first?.id as string),
            ).toEqual(first as object);
          } else {
            // MongoDB: the trail was written by inserts only
            expect(calls.insertMany).toBeGreaterThan(0);
            for (const m of CHANGES) expect(calls[m]).toBeUndefined();
          }
        } finally {
          await t.deps.close();
        }
      });

      test("reports: one vote per account, later filings joined, a missing company by domain, the caller's own list", async () => {
        const { file, built } = catalogCopy();
        const [slug] = fullBrands(built) as string[];
        const { t } = await instance(kind, kind.env(file));
        try {
          const a = await t.deps.accounts.createAccountWithKey({ tier: "free" });
          const b = await t.deps.accounts.createAccountWithKey({ tier: "pro" });
          const aBearer = await t.deps.access.sign(a.accountId, "free");
          const file1 = (await (
            await t.post("/v1/reports", a.apiKey, { slug, kind: "wrong_logo" })
          ).json()) as { id: string; votes: number; voted: boolean };
          expect(file1).toMatchObject({ votes: 1, voted: true });
          // the same account again (by key, by the console's token): no second vote, url and note kept
          const again = await t.post("/v1/reports", a.apiKey, {
            slug,
            kind: "wrong_logo",
            url: "https://brand.example/logo.svg",
            note: "the old mark",
          });
          expect(await again.json()).toMatchObject({ id: file1.id, votes: 1, voted: false });
          const console_ = await t.req("/v1/reports", {
            method: "POST",
            headers: { authorization: `Bearer ${aBearer}`, "content-type": "application/json" },
            body: JSON.stringify({ slug, kind: "wrong_logo" }),
          });
          expect(await console_.json()).toMatchObject({ id: file1.id, votes: 1, voted: false });
          // another account: a vote, its url and note attached to the same report
          const other = await t.post("/v1/reports", b.apiKey, {
            slug,
            kind: "wrong_logo",
            url: "https://brand.example/new.svg",
            note: "see their press page",
          });
          expect(await other.json()).toMatchObject({ id: file1.id, votes: 2, voted: true });

          // a missing company: queued for discovery, in the queue, found by discovery
          const missing = await t.post("/v1/reports", a.apiKey, {
            domain: "www.newco.test",
            kind: "missing_brand",
            note: "please add Newco",
          });
          expect(missing.status).toBe(202);
          const m = (await missing.json()) as { id: string; domain: string; slug: string | null };
          expect(m).toMatchObject({ domain: "newco.test", slug: null, discoveryQueued: true });
          const known = await t.post("/v1/reports", a.apiKey, {
            domain: "www.github.com",
            kind: "missing_brand",
          });
          expect(known.status).toBe(409);
          expect(await known.json()).toMatchObject({ error: "brand_exists", slug: "github" });
          const unknown = await t.post("/v1/reports", a.apiKey, {
            domain: "unknown-co.test",
            kind: "wrong_logo",
          });
          expect(await unknown.json()).toMatchObject({ error: "domain_not_found" });
          await t.deps.discovery.idle();
          const queue = (
            (await (await as(t, ADMIN_TOKEN, "/admin/reports?status=open")).json()) as {
              items: {
                id: string;
                votes: number;
                urls: string[];
                notes: { text: string }[];
                brand: { slug: string } | null;
              }[];
            }
          ).items;
          expect(queue.map((r) => r.id)).toEqual([m.id, file1.id]);
          expect(queue[0]?.brand?.slug).toBeTruthy();
          expect(queue[1]).toMatchObject({
            votes: 2,
            urls: ["https://brand.example/logo.svg", "https://brand.example/new.svg"],
            notes: [
              expect.objectContaining({ text: "the old mark" }),
              expect.objectContaining({ text: "see their press page" }),
            ],
          });

          // the operator decides; each account sees its own reports and their status
          expect((await json(t, ALICE, "POST", `/admin/reports/${file1.id}/reject`)).status).toBe(
            200,
          );
          const mine = async (key: string, q = "") => {
            const r = await t.get(`/v1/reports${q}`, key);
            expect(r.status).toBe(200);
            return (await r.json()) as {
              items: {
                id: string;
                status: string;
                notes: { text: string }[];
                decidedAt: string | null;
              }[];
              next: string | null;
            };
          };
          const ofA = await mine(a.apiKey);
          expect(ofA.items.map((r) => [r.id, r.status])).toEqual([
            [m.id, "open"],
            [file1.id, "rejected"],
          ]);
          expect(ofA.items[1]?.decidedAt).toBeTruthy();
          expect(ofA.items[1]?.notes.map((n) => n.text)).toEqual(["the old mark"]);
          expect(ofA.next).toBeNull();
          const ofB = await mine(b.apiKey);
          expect(ofB.items.map((r) => r.id)).toEqual([file1.id]);
          expect(ofB.items[0]?.notes.map((n) => n.text)).toEqual(["see their press page"]);
          // a page at a time
          const p1 = await mine(a.apiKey, "?limit=1");
          expect(p1.items.map((r) => r.id)).toEqual([m.id]);
          const p2 = await mine(a.apiKey, `?limit=1&cursor=${p1.next}`);
          expect(p2.items.map((r) => r.id)).toEqual([file1.id]);
          expect((await mine(a.apiKey, `?limit=1&cursor=${p2.next}`)).items).toEqual([]);
          const byToken = await t.req("/v1/reports", {
            headers: { authorization: `Bearer ${aBearer}` },
          });
          expect(((await byToken.json()) as { items: unknown[] }).items).toHaveLength(2);
          expect((await t.req("/v1/reports")).status).toBe(401);
          expect((await t.get("/v1/reports?cursor=nope", a.apiKey)).status).toBe(422);
        } finally {
          await t.deps.close();
        }
      });
    },
  );
}

describe("a store that recorded no build yet (embedded SQLite)", () => {
  test("pins an earlier build left on retired brands move at the first start", async () => {
    const { file, built } = catalogCopy();
    const [retired, target] = fullBrands(built) as string[];
    const env = KINDS[0]?.env(file) as Record<string, string>;
    let { t, store } = await instance(KINDS[0] as Kind, env);
    try {
      expect((await putSvg(t, ALICE, retired as string, "color", BLUE_SVG)).status).toBe(200);
      await t.deps.close();
      // as a store kept before builds were recorded, and a build that retired the brand since
      const db = openEmbeddedStore(testConfig(env));
      db.db?.run("DELETE FROM catalog_state_version");
      db.db?.run("DELETE FROM catalog_state");
      await db.close();
      writeFileSync(
        file,
        JSON.stringify(
          nextBuild(built, { retire: [[retired as string, target as string]], rename: [] }),
        ),
      );
      ({ t, store } = await instance(KINDS[0] as Kind, env));
      const key = await t.key("internal");
      expect(await (await t.get(`/v1/svg/${target}?variant=color`, key)).text()).toContain(
        "1245ab",
      );
      const events = await trail(t, target as string);
      expect(events.map((e) => `${e.slug} ${e.type}`)).toContain(`${target} pin_moved`);
      expect(store.kind).toBe("embedded");
    } finally {
      await t.deps.close();
    }
  });
});
