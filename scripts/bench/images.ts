#!/usr/bin/env bun
/**
 * Logos by URL: GET /i/{slug}.svg through signed URLs against the metered GET /v1/svg/{slug}
 * with X-API-Key (same slugs, same bucket, same key), in interleaved rounds of the same run;
 * a refused signature (403) under load; and, in process, the cost of one signature check
 * (valid, and refused) over many calls. Prints figures only.
 *   bun scripts/bench/images.ts [--duration 4] [--connections 32] [--rounds 3]
 */
import { join } from "node:path";
import { AccountService } from "../../src/accounts/service";
import { EmbeddedAccountStore } from "../../src/accounts/store/embedded";
import { splitUrl } from "../../src/images/options";
import { ImageSigner } from "../../src/images/service";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import { loadArgs } from "./args";
import { type LoadResult, load, loadGenerator } from "./load";
import { startApp, tempDir } from "./servers";
import { fmt, fmtMedian, fmtRounds, percentile, roundRatios } from "./stats";

const { duration, connections, rounds } = loadArgs({ duration: 4, connections: 32, rounds: 3 });
const slugs = ["github", "stripe", "slack", "google", "apple", "microsoft", "openai", "figma"];

// ---- over HTTP ----
// no request log lines: the refused runs would write one per 403
const app = await startApp({ tier: "internal", env: { LOG_REQUESTS: "off" } });
const issued = await fetch(`${app.url}/v1/image-urls`, {
  method: "POST",
  headers: { "x-api-key": app.key, "content-type": "application/json" },
  body: JSON.stringify({ images: slugs.map((slug) => ({ slug, format: "svg" })) }),
});
const signedPaths = ((await issued.json()) as { urls: { path: string }[] }).urls.map((u) => u.path);
const headerPaths = slugs.map((s) => `/v1/svg/${s}`);
const badPaths = signedPaths.map((p) => p.replace(/sig=.{4}/, "sig=AAAA"));
for (const [path, want] of [
  [signedPaths[0], 200],
  [badPaths[0], 403],
] as const) {
  const r = await fetch(`${app.url}${path}`);
  if (r.status !== want) throw new Error(`${path} answered ${r.status}, expected ${want}`);
}

const run = (paths: string[], headers: Record<string, string>, label: string, secs = duration) =>
  load({ url: app.url, paths, headers, duration: secs, connections, serverPid: app.pid, label });

await run(headerPaths, { "x-api-key": app.key }, "warm-up /v1/svg", 1);
await run(signedPaths, {}, "warm-up /i/", 1);
const v1: LoadResult[] = [];
const viaUrl: LoadResult[] = [];
const refused: LoadResult[] = [];
for (let r = 0; r < rounds; r++) {
  v1.push(await run(headerPaths, { "x-api-key": app.key }, "GET /v1/svg/{slug} (X-API-Key)"));
  viaUrl.push(await run(signedPaths, {}, "GET /i/{slug}.svg (signed)"));
  refused.push(await run(badPaths, {}, "GET /i/ bad signature (403)"));
}
await app.stop();

// ---- in process: one signature check ----
const dir = tempDir("bench-images-");
const db = new Database(join(dir, DB_FILE));
const store = new EmbeddedAccountStore(db);
const accounts = new AccountService(store);
const { keyId } = await accounts.createAccountWithKey({ tier: "internal" });
const signer = new ImageSigner(accounts, () => store.serverSecret("image-url-signing"));
const exp = Math.floor(Date.now() / 1000) + 3600;
const good = await signer.sign(keyId, "/i/github.svg", { size: "64" }, exp);
const bad = good.replace(/sig=.{4}/, "sig=AAAA");

async function timeVerify(pathAndQuery: string, n: number): Promise<number[]> {
  const { path, query } = splitUrl(`http://x${pathAndQuery}`);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    try {
      await signer.verify(path, query);
    } catch {}
    times.push((performance.now() - t0) * 1000);
  }
  return times;
}
await timeVerify(good, 2000);
await timeVerify(bad, 2000);
const goodTimes = await timeVerify(good, 20_000);
const badTimes = await timeVerify(bad, 20_000);
db.close();

const row = (name: string, runs: LoadResult[]) =>
  `| ${name} | ${fmt(
    percentile(
      runs.map((r) => r.rps),
      50,
    ),
    0,
  )} | ${fmt(
    percentile(
      runs.map((r) => r.p99),
      50,
    ),
    2,
  )} | ${fmt(
    percentile(
      runs.map((r) => r.cpuUsPerRequest ?? Number.NaN),
      50,
    ),
    0,
  )} |`;
console.log(
  `\nLogos by URL (${loadGenerator()}, ${connections} connections, ${rounds} rounds of ${duration} s, medians)\n`,
);
console.log("| Route | req/s | p99 ms | server CPU µs/req |");
console.log("|---|---|---|---|");
console.log(row("GET /v1/svg/{slug} with X-API-Key (metered)", v1));
console.log(row("GET /i/{slug}.svg signed (metered)", viaUrl));
console.log(row("GET /i/ with a bad signature (403, no counter)", refused));
const ratios = roundRatios(viaUrl, v1);
console.log(
  `\n/i/ throughput as a share of /v1/svg: ${fmtMedian(ratios)}; rounds ${fmtRounds(ratios)}`,
);
console.log(
  `signature check in process: valid p50 ${fmt(percentile(goodTimes, 50), 1)} µs, p99 ${fmt(percentile(goodTimes, 99), 1)} µs; refused p50 ${fmt(percentile(badTimes, 50), 1)} µs, p99 ${fmt(percentile(badTimes, 99), 1)} µs`,
);
