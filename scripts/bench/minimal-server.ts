/**
 * Child process for scripts/bench/servers.ts (startMinimal): the least a metered SVG route has
 * to do, written directly on Bun.serve, as the reference for the app's latency. Per request:
 * the X-API-Key looked up by its SHA-256 in a map, one daily quota unit counted in a map, the
 * rate-limit and security headers set, the SVG's bytes sent, and one usage event line buffered
 * and appended to a JSONL file every 250 ms. Written the cheap way (keys checked before are
 * cached by their text; events are lines of text, not objects). Prints {"url", "key"} on its first line.
 */
import { createHash } from "node:crypto";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const KEY = "bak_0123456789abcdef_minimalservertestkey0123456789a";
const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const principals = new Map([
  [sha(KEY), { accountId: "acc-1", keyId: "0123456789abcdef", tier: "pro", limit: 1_000_000_000 }],
]);
const body = Buffer.from(process.env.BARE_BODY ?? "", "base64");
const counters = new Map<string, number>();
const dir = mkdtempSync(join(tmpdir(), "bench-minimal-"));
const log = join(dir, "usage.jsonl");
/** keys checked before, by their text (the app keeps such a cache too) */
const known = new Map<string, ReturnType<typeof principals.get>>();
let lines = "";

setInterval(() => {
  if (!lines) return;
  const out = lines;
  lines = "";
  appendFileSync(log, out);
}, 250);

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const started = performance.now();
    const key = req.headers.get("x-api-key");
    let p = key ? known.get(key) : undefined;
    if (key && !p) {
      p = principals.get(sha(key));
      if (p) known.set(key, p);
    }
    if (!p) return new Response('{"error":"invalid_api_key"}', { status: 401 });
    const now = new Date();
    const day = now.toISOString().slice(0, 10);
    const slot = `${day}|${p.keyId}|svg`;
    const used = (counters.get(slot) ?? 0) + 1;
    counters.set(slot, used);
    const reset = Math.ceil(
      (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) /
        1000,
    );
    const slug = new URL(req.url).pathname.split("/").pop() ?? "";
    // the event's JSONL line, written as text (no object per event)
    lines += `{"at":${now.getTime()},"accountId":"${p.accountId}","keyId":"${p.keyId}","tier":"${p.tier}","bucket":"svg","route":"/v1/svg/:slug","slug":${JSON.stringify(slug)},"variant":"mono","status":200,"latencyMs":${Math.round((performance.now() - started) * 100) / 100}}\n`;
    return new Response(body, {
      headers: {
        "content-type": "image/svg+xml",
        "cache-control": "public, max-age=86400",
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        "x-content-type-options": "nosniff",
        "x-svg-variant": "mono",
        vary: "X-API-Key",
        "x-ratelimit-limit": String(p.limit),
        "x-ratelimit-remaining": String(p.limit - used),
        "x-ratelimit-reset": String(reset),
      },
    });
  },
});
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}`, key: KEY }));
process.on("SIGTERM", () => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
