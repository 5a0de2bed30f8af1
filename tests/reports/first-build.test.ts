/**
 * A fresh store's first catalog build record waits until the instance has started (it copies
 * every built brand's state): nothing is recorded at the start, the record is made when its
 * timer fires, an instance stopped before then records nothing, and an in-place reload before
 * then records the outgoing version first so the reload's changes are told brand by brand.
 * The timers are the test's own (ManualTimers): no test waits for time to pass.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BuiltCatalog } from "../../src/catalog/built-catalog";
import { CatalogService } from "../../src/catalog/service";
import { openEmbeddedStore, type Store } from "../../src/deps";
import { CorrectionsService } from "../../src/reports/service";
import { tempDir, testConfig } from "../support/app";
import { smallCatalogFile } from "../support/catalog";
import { ManualTimers } from "../support/clock";

const open: { store: Store; catalog: CatalogService; corrections: CorrectionsService }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.corrections.stop();
    await o.corrections.settled();
    o.catalog.close();
    await o.store.close();
  }
});

async function instance(timers: ManualTimers) {
  const file = join(tempDir("bapi-first-"), "catalog.json");
  copyFileSync(smallCatalogFile(), file);
  const store = openEmbeddedStore(testConfig({ CATALOG_FILE: file }));
  const catalog = new CatalogService(store.catalog);
  await catalog.load();
  const corrections = new CorrectionsService({
    store: store.corrections,
    catalog,
    // neither is used by the build record
    brands: {} as never,
    fetcher: {} as never,
    timers,
    firstRecordMs: 5_000,
  });
  await corrections.start();
  open.push({ store, catalog, corrections });
  const built = JSON.parse(readFileSync(file, "utf8")) as BuiltCatalog;
  return { store, catalog, corrections, file, built };
}

describe("a fresh store's first build record", () => {
  test("waits for its timer: nothing at the start, every built brand once it fires", async () => {
    const timers = new ManualTimers();
    const { store, catalog, corrections, built } = await instance(timers);
    expect(await store.corrections.catalogStateVersion()).toBeNull();
    expect(timers.pending).toEqual([5_000]);
    timers.advance(4_999);
    await corrections.settled();
    expect(await store.corrections.catalogStateVersion()).toBeNull();
    timers.advance(1);
    await corrections.settled();
    expect(await store.corrections.catalogStateVersion()).toBe(catalog.version as string);
    expect((await store.corrections.catalogState()).length).toBe(built.brands.length);
  });

  test("an instance stopped before the timer fires records nothing", async () => {
    const timers = new ManualTimers();
    const { store, corrections } = await instance(timers);
    corrections.stop();
    expect(timers.pending).toEqual([]);
    await corrections.settled();
    expect(await store.corrections.catalogStateVersion()).toBeNull();
    expect(await store.corrections.catalogState()).toEqual([]);
  });

  test("a reload before the timer fires records the outgoing version, then the reload's changes", async () => {
    const timers = new ManualTimers();
    const { store, catalog, corrections, file, built } = await instance(timers);
    const first = built.brands[0] as BuiltCatalog["brands"][number];
    const next: BuiltCatalog = {
      ...built,
      version: `${built.version}-next`,
      brands: built.brands.map((b) =>
        b.id === first.id ? { ...b, name: `${b.name} Renamed` } : b,
      ),
    };
    writeFileSync(file, JSON.stringify(next));
    await catalog.load();
    await corrections.settled();
    expect(timers.pending).toEqual([]);
    expect(await store.corrections.catalogStateVersion()).toBe(next.version);
    const events = await store.corrections.audit({ brandIds: [first.id], slugs: [] }, 10);
    const changed = events.filter((e) => e.type === "catalog_changed");
    expect(changed).toHaveLength(1);
    expect(changed[0]?.before).toMatchObject({ name: first.name });
    expect(changed[0]?.after).toMatchObject({ name: `${first.name} Renamed` });
    expect(changed[0]?.detail).toMatchObject({ previous: built.version, version: next.version });
  });

  test("a store that holds pins records at the start (their brands may have been retired)", async () => {
    const timers = new ManualTimers();
    const a = await instance(timers);
    a.corrections.stop();
    const b0 = a.built.brands[0] as BuiltCatalog["brands"][number];
    await a.store.corrections.setPin({
      brandId: b0.id,
      slug: b0.slug,
      field: "name",
      value: "Pinned",
      by: "admin:test",
      why: null,
      at: new Date().toISOString(),
    } as never);
    const again = new CorrectionsService({
      store: a.store.corrections,
      catalog: a.catalog,
      brands: {} as never,
      fetcher: {} as never,
      timers,
      firstRecordMs: 5_000,
    });
    await again.start();
    await again.settled();
    again.stop();
    expect(timers.pending).toEqual([]);
    expect(await a.store.corrections.catalogStateVersion()).toBe(a.catalog.version as string);
  });
});
