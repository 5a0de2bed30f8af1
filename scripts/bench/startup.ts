/**
 * Start-up with the whole catalog (icon-set brands + the name-suggestion-index directory):
 * time to load build/catalog.json, install it and build the domain resolver (what the server
 * does before it listens), then the search index (built on the first search), the CPU time
 * each took (the fair figure on a shared machine), the peak RSS (the kernel's high-water mark on
 * Linux, VmHWM: the true peak, not samples between phases) and the RSS once garbage
 * is collected. Bars: < 2 s, < 400 MB.
 *
 *   npx bun scripts/bench/startup.ts     (CATALOG_FILE overrides the catalog)
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BrandResolver } from "../../src/catalog/brand/service";
import { SearchIndex } from "../../src/catalog/search/service";
import { CatalogService } from "../../src/catalog/service";
import { FileCatalogSource } from "../../src/catalog/store/embedded";

const file = process.env.CATALOG_FILE ?? join(import.meta.dir, "../../build/catalog.json");
const mb = () => process.memoryUsage().rss / 2 ** 20;
/** the kernel's high-water mark of RSS (Linux): the true peak, not a sample between phases */
const highWater = () => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
};
let peak = mb();
const sample = () => {
  peak = Math.max(peak, mb(), existsSync("/proc/self/status") ? highWater() : 0);
};
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const source = new FileCatalogSource(file);
const catalog = new CatalogService(source);
await catalog.load();
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
sample(); // the high-water mark again: settling must not hide a peak
const directory = catalog.list(1, 0, false).total;
// start-up is judged by CPU time: wall time on the shared machine includes the neighbours' load
const met = (cpu.user + cpu.system) / 1000 < 2000 && peak < 400 && settled < 400;
console.log(
  `startup: ${catalog.size} brands (${directory} directory entries), ${index.size} indexed: ` +
    `start-up ${Math.round(ms)} ms wall, ${Math.round((cpu.user + cpu.system) / 1000)} ms CPU; ` +
    `search index (first search) ${Math.round(indexMs)} ms wall, ${Math.round((indexCpu.user + indexCpu.system - cpu.user - cpu.system) / 1000)} ms CPU; ` +
    `RSS peak ${Math.round(peak)} MB, ${Math.round(settled)} MB after GC (bars: < 2000 ms, < 400 MB: ${met ? "MET" : "MISSED"})`,
);
