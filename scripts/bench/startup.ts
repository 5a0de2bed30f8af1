/**
 * Start-up with the whole catalog (icon-set brands + the name-suggestion-index directory):
 * time to load build/catalog.json, install it and build the domain resolver (what the server
 * does before it listens), then the search index (built on the first search), the CPU time
 * each took (the fair figure on a shared machine), the peak RSS seen and the RSS once garbage
 * is collected. Bars (issue 25): < 2 s, < 400 MB.
 *
 *   npx bun scripts/bench/startup.ts     (CATALOG_FILE overrides the catalog)
 */
import { join } from "node:path";
import { BrandResolver } from "../../src/catalog/brand/service";
import { SearchIndex } from "../../src/catalog/search/service";
import { CatalogService, hasArtwork } from "../../src/catalog/service";
import { FileCatalogSource } from "../../src/store/embedded/catalog";

const file = process.env.CATALOG_FILE ?? join(import.meta.dir, "../../build/catalog.json");
const mb = () => process.memoryUsage().rss / 2 ** 20;
let peak = mb();
const sample = () => {
  peak = Math.max(peak, mb());
};
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const source = new FileCatalogSource(file);
const catalog = new CatalogService(source);
catalog.install(await source.load());
sample();
const resolver = new BrandResolver(catalog);
sample();
resolver.resolveHost("allianz.com");
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const t1 = performance.now();
const index = new SearchIndex(catalog);
index.search("amaz", 5);
const indexMs = performance.now() - t1;
const indexCpu = process.cpuUsage(cpu0);
sample();
Bun.gc(true);
await Bun.sleep(1000);
Bun.gc(true);
const settled = mb();
const directory = catalog.all().filter((b) => !hasArtwork(b)).length;
console.log(
  `startup: ${catalog.size} brands (${directory} directory entries), ${resolver.size} hosts, ${index.size} indexed: ` +
    `start-up ${Math.round(ms)} ms wall, ${Math.round((cpu.user + cpu.system) / 1000)} ms CPU; ` +
    `search index (first search) ${Math.round(indexMs)} ms wall, ${Math.round((indexCpu.user + indexCpu.system - cpu.user - cpu.system) / 1000)} ms CPU; ` +
    `RSS peak ${Math.round(peak)} MB, ${Math.round(settled)} MB after GC (bars: < 2000 ms, < 400 MB)`,
);
