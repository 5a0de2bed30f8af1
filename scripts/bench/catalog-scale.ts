#!/usr/bin/env bun
/**
 * The catalog at scale: a synthetic catalog of N brands, and the service started on it.
 *
 *   bun scripts/bench/catalog-scale.ts generate --brands 1000000 --out /work/bench-data/c1m.sqlite
 *     clones the built catalog (build/catalog.sqlite, or --from) until N brands: each clone
 *     gets a unique slug, name and domain (the original's with a made-up word), keeps the
 *     original's artwork or lack of it (so brands with and without artwork keep the real
 *     proportion) and drops aliases, tickers and retired slugs (they name one brand); written
 *     as the same catalog database format the build writes.
 *
 *   bun scripts/bench/catalog-scale.ts bench --file /work/bench-data/c1m.sqlite [--seconds 10]
 *       [--root OTHER_CHECKOUT --serve ITS_CATALOG_FILE]   (the same figures for another checkout)
 *     starts `src/main.ts` on that file in its own process and prints: time from spawn to
 *     /readyz 200, RSS settled (2 s after ready), the kernel's peak (VmHWM), RSS after the
 *     search traffic, p50/p99 of GET /v1/catalog/{slug}, /v1/brand?domain=, /v1/search and
 *     /v1/svg/{slug} (one request at a time, random brands, distinct queries), and the longest
 *     /healthz answer of a probe that asks every 5 ms from ready to the end: the longest
 *     stall of the event loop after ready, as a client sees it.
 */
import { readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import type { Brand } from "../../src/catalog/built-catalog";
import { CatalogDb } from "../../src/catalog/store/catalog-db";
import { writeCatalogFile } from "../../src/catalog/store/schema";
import { freePort, ROOT, tempDir } from "./servers";
import { percentile } from "./stats";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    brands: { type: "string", default: "232000" },
    out: { type: "string" },
    from: { type: "string", default: `${ROOT}/build/catalog.sqlite` },
    file: { type: "string" },
    seconds: { type: "string", default: "10" },
    /** another checkout to start (a before/after comparison), and the catalog file it is given */
    root: { type: "string", default: ROOT },
    serve: { type: "string" },
  },
});

const SYLLABLES = "ka ro mi tu ve sa lo ne di pa zu re bo fi ga wy".split(" ");

/** A made-up word for a number: its base-16 digits as syllables ("karo", "mitu"). */
function word(n: number): string {
  let out = "";
  let x = n;
  do {
    out += SYLLABLES[x % 16];
    x = Math.floor(x / 16);
  } while (x > 0);
  return out;
}

async function generate() {
  const target = Number(values.brands);
  const out = values.out;
  if (!out) throw new Error("--out FILE is required");
  const source = new CatalogDb();
  const meta = source.attach(values.from as string);
  const originals = meta.brands;
  let maxId = 0;
  for (const b of source.each()) maxId = Math.max(maxId, b.id);
  const started = performance.now();
  let made = 0;
  async function* brands(): AsyncGenerator<Brand> {
    for (const b of source.each()) {
      if (made >= target) return;
      made++;
      yield b;
    }
    for (let round = 1; made < target; round++) {
      for (const b of source.each()) {
        if (made >= target) return;
        const w = word(round * 7919 + (b.id % 7919));
        const host = b.domains[0]?.replace(/^[^.]+/, (label) => `${label}-${w}`);
        made++;
        if (made % 100_000 === 0)
          console.error(`${made} brands, ${Math.round((performance.now() - started) / 1000)} s`);
        yield {
          ...b,
          id: maxId + made,
          slug: `${b.slug}-${w}`,
          name: `${b.name} ${w[0]?.toUpperCase()}${w.slice(1)}`,
          aliases: [],
          tickers: [],
          formerSlugs: [],
          domains: host ? [host] : [],
        };
      }
    }
  }
  const n = await writeCatalogFile(
    out,
    { version: `scale-${target}-${meta.version}`, builtAt: new Date().toISOString() },
    brands(),
    (f) => new DatabaseSync(f),
  );
  source.close();
  console.log(
    `wrote ${out}: ${n} brands (${originals} originals cloned) in ${Math.round((performance.now() - started) / 1000)} s`,
  );
}

const status = (pid: number, field: string) => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
};

async function timed(url: string, headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(url, { headers });
  await r.arrayBuffer();
  if (r.status >= 500) throw new Error(`${url}: ${r.status}`);
  return performance.now() - t0;
}

async function bench() {
  const file = values.file;
  if (!file) throw new Error("--file FILE is required");
  const seconds = Number(values.seconds);
  // sample brands for the requests: random ids spread over the catalog
  const db = new CatalogDb();
  const meta = db.attach(file);
  const sample: Brand[] = [];
  for (let i = 0; sample.length < 400 && i < 4000; i++) {
    const ids = db.page(1, Math.floor(Math.random() * meta.brands));
    const b = ids[0] === undefined ? undefined : db.brand(ids[0]);
    if (b) sample.push(b);
  }
  db.close();
  const withArt = sample.filter((b) => Object.keys(b.variants).length);
  const withDomain = sample.filter((b) => b.domains.length);

  const port = await freePort();
  const dataDir = tempDir("bapi-scale-");
  const admin = "bench-admin-token-0123456789";
  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, "--max-http-header-size=131072", "src/main.ts"], {
    cwd: values.root,
    env: {
      ...process.env,
      PORT: String(port),
      CATALOG_FILE: values.serve ?? file,
      DATA_DIR: dataDir,
      ADMIN_TOKEN: admin,
      LOG_LEVEL: "error",
      LOG_REQUESTS: "off",
    },
    stdout: "inherit",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}`;
  let readyMs = 0;
  for (;;) {
    try {
      const r = await fetch(`${base}/readyz`);
      if (r.status === 200) {
        readyMs = performance.now() - t0;
        break;
      }
    } catch {}
    if (performance.now() - t0 > 120_000) throw new Error("not ready in 120 s");
    await Bun.sleep(20);
  }
  // the stall probe: /healthz every 5 ms from ready on, one at a time
  let probing = true;
  let longest = 0;
  const probe = (async () => {
    while (probing) {
      const ms = await timed(`${base}/healthz`, {});
      longest = Math.max(longest, ms);
      await Bun.sleep(5);
    }
  })();
  await Bun.sleep(2000);
  const settled = status(proc.pid, "VmRSS");
  const stalls: string[] = [`idle ${longest.toFixed(1)} ms`];
  const rss: string[] = [];
  const keyRes = await fetch(`${base}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({
      tier: "enterprise",
      limits: { svg: null, search: null, catalog: null },
    }),
  });
  const { apiKey } = (await keyRes.json()) as { apiKey: string };
  const h = { "x-api-key": apiKey };
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)] as T;
  const routes: Record<string, () => string> = {
    slug: () => `${base}/v1/catalog/${pick(sample).slug}`,
    domain: () => `${base}/v1/brand?domain=${pick(withDomain).domains[0]}`,
    // distinct queries (no response cache hits): a prefix, a typo, two words of a name
    search: () => {
      const name = pick(sample).name.toLowerCase();
      const r = Math.random();
      if (r < 0.4)
        return `${base}/v1/search?q=${encodeURIComponent(name.slice(0, 3 + Math.floor(Math.random() * 5)))}&n=${Math.random()}`;
      if (r < 0.7) {
        const i = 1 + Math.floor(Math.random() * Math.max(1, name.length - 2));
        const typo = name.slice(0, i) + name.slice(i + 1);
        return `${base}/v1/search?q=${encodeURIComponent(typo.slice(0, 30))}`;
      }
      return `${base}/v1/search?q=${encodeURIComponent(name.slice(0, 40))}`;
    },
    svg: () =>
      `${base}/v1/svg/${pick(withArt).slug}?variant=${Object.keys(pick(withArt).variants)[0] ?? "mono"}`,
  };
  const figures: string[] = [];
  for (const [name, url] of Object.entries(routes)) {
    longest = 0;
    const times: number[] = [];
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) times.push(await timed(url().replace(/&n=[0-9.]+$/, ""), h));
    figures.push(
      `${name} p50 ${percentile(times, 50).toFixed(2)} ms p99 ${percentile(times, 99).toFixed(2)} ms (${times.length})`,
    );
    stalls.push(`${name} ${longest.toFixed(1)} ms`);
    rss.push(`${name} ${Math.round(status(proc.pid, "VmRSS"))} MB`);
  }
  const afterSearch = status(proc.pid, "VmRSS");
  const peak = status(proc.pid, "VmHWM");
  probing = false;
  await probe;
  proc.kill("SIGTERM");
  await proc.exited;
  console.log(
    `catalog ${file}: ${meta.brands} brands (${meta.artwork} with artwork)\n` +
      `ready ${(readyMs / 1000).toFixed(2)} s; RSS settled ${Math.round(settled)} MB, peak ${Math.round(peak)} MB, after traffic ${Math.round(afterSearch)} MB (after each route: ${rss.join(", ")}); longest /healthz after ready: ${stalls.join(", ")}\n` +
      figures.join("\n"),
  );
}

if (positionals[0] === "generate") await generate();
else if (positionals[0] === "bench") await bench();
else {
  console.error("usage: catalog-scale.ts generate --brands N --out FILE | bench --file FILE");
  process.exit(2);
}
