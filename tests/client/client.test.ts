import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BrandApi, BrandApiError } from "../../packages/client/src/index";
import { routesSource } from "../../scripts/build-client";
import { PNG_SIGNATURE } from "../assets/util";
import { ADMIN_TOKEN, createEnterprise, makeApp, type TestApp, tempDir } from "../support/app";
import { expectError } from "../support/errors";

// the Node and Deno runs start a process each
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "../..");
let t: TestApp;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let pro: string;

beforeAll(async () => {
  t = await makeApp();
  pro = await t.key("pro");
  // the real app on a loopback port
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => t.app.handle(r) });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  server.stop(true);
  await t.close();
});

/** fetch through to the server, counting requests by path */
function countingFetch() {
  const seen: string[] = [];
  const f = (url: string, init: RequestInit) => {
    seen.push(new URL(url).pathname);
    return fetch(url, init);
  };
  return { seen, fetch: f };
}

describe("the typed client against the real app (Bun)", () => {
  test("JSON, SVG and PNG routes answer typed values", async () => {
    const api = new BrandApi({ baseUrl: base, apiKey: pro });
    const github = await api.call("GET /v1/catalog/{slug}", { path: { slug: "github" } });
    expect(github.slug).toBe("github");
    const batch = await api.call("POST /v1/catalog/batch", {
      body: { slugs: ["github", "gitlab"] },
    });
    expect(batch.results.github?.slug).toBe("github");
    const found = await api.call("GET /v1/search", { query: { q: "git" } });
    expect(found.matches.length).toBeGreaterThan(0);
    const svg = await api.call("GET /v1/svg/{slug}", { path: { slug: "github" } });
    expect(svg).toStartWith("<svg");
    const png = await api.call("GET /v1/png/{slug}", {
      path: { slug: "github" },
      query: { size: 32 },
    });
    expect([...png.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    const usage = await api.call("GET /v1/usage", {});
    expect(usage.tier).toBe("pro");
  });

  test("card-statement descriptors: one line and a batch, typed; no brand is merchant_not_found", async () => {
    const api = new BrandApi({ baseUrl: base, apiKey: pro });
    const one = await api.call("GET /v1/brand", {
      query: { transaction: "STARBUCKS 1523 OMAHA NE", country: "US" },
    });
    expect(one.slug).toBe("starbucks");
    expect(one.transaction?.match).toBe("name");
    const { results } = await api.call("POST /v1/transactions", {
      body: {
        transactions: [
          { descriptor: "STARBUCKS 1523 OMAHA NE", country: "US" },
          { descriptor: "CASH WITHDRAWAL 0042" },
        ],
      },
    });
    expect(results.map((r) => r.brand?.slug ?? null)).toEqual(["starbucks", null]);
    expect(results[1]?.transaction.operation).toBe("cash_withdrawal");
    const none = (await api
      .call("GET /v1/brand", { query: { transaction: "SQ *LUCYS LEMONADE STAND" } })
      .catch((e) => e)) as BrandApiError;
    expect(none).toMatchObject({ status: 404, code: "merchant_not_found" });
    expect(none.body?.transaction).toMatchObject({ intermediary: { name: "Square" } });
  });

  test("errors are one typed error with the spec's code; a daily 429 is not waited for", async () => {
    const api = new BrandApi({ baseUrl: base, apiKey: pro });
    const missing = await api
      .call("GET /v1/catalog/{slug}", { path: { slug: "no-such-brand-zz" } })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(BrandApiError);
    expect(missing).toMatchObject({ status: 404, code: "service_not_found" });
    const bad = new BrandApi({ baseUrl: base, apiKey: "bak_0000000000000000_x" });
    expect(await bad.call("GET /v1/usage", {}).catch((e) => e.code)).toBe("invalid_api_key");
    const { apiKey } = await createEnterprise(t, { search: 0 });
    let calls = 0;
    const limited = new BrandApi({
      baseUrl: base,
      apiKey,
      fetch: (url, init) => {
        calls++;
        return fetch(url, init);
      },
    });
    const e = (await limited
      .call("GET /v1/search", { query: { q: "git" } })
      .catch((x) => x)) as BrandApiError;
    // answered with the first 429: not retried (a wait for the daily reset would retry)
    expect(calls).toBe(1);
    expect(e.status).toBe(429);
    expect(e.code).toBe("rate_limit_exceeded");
    expect(e.retryAfter).toBeGreaterThan(5);
    expect(e.body?.reset_in_seconds).toBe(e.retryAfter as number);
  });

  test("a 429 with a short Retry-After is retried after waiting", async () => {
    let calls = 0;
    const waits: number[] = [];
    const api = new BrandApi({
      baseUrl: base,
      apiKey: pro,
      sleep: async (ms) => {
        waits.push(ms);
      },
      fetch: (url, init) => {
        calls++;
        // the first answer is a per-window 429 of one second, then the real server answers
        if (calls === 1)
          return Promise.resolve(
            Response.json(
              { error: "rate_limit_exceeded", message: "window", reset_in_seconds: 1 },
              { status: 429, headers: { "retry-after": "1" } },
            ),
          );
        return fetch(url, init);
      },
    });
    const usage = await api.call("GET /v1/usage", {});
    expect(usage.tier).toBe("pro");
    expect(calls).toBe(2);
    // the retry waited out Retry-After before asking again
    expect(waits).toEqual([1000]);
  });

  test("imageUrl() signs locally after fetching the signing secret once", async () => {
    const counting = countingFetch();
    const api = new BrandApi({ baseUrl: base, apiKey: pro, fetch: counting.fetch });
    const urls = await Promise.all(
      [32, 48, 64].map((size) => api.imageUrl("github", { format: "png", size, bg: "#000000" })),
    );
    expect(counting.seen).toEqual(["/v1/image-urls/signing-secret"]);
    for (const url of urls) {
      const r = await fetch(url);
      expect(r.status).toBe(200);
      expect(r.headers.get("cache-control")).toMatch(/immutable$/);
    }
    // the same URL as the server signs for the same image and expiry
    const tampered = urls[0]!.replace("size=32", "size=33");
    await expectError(await fetch(tampered), 403, "invalid_signature");
  });

  test("publicImageUrl() with a publishable key works from its origin", async () => {
    const accountId = (await t.deps.accounts.verifyKey(pro))!.accountId;
    const made = await t.req(`/admin/accounts/${accountId}/publishable-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ origins: ["app.example.com"] }),
    });
    const { publishableKey } = (await made.json()) as { publishableKey: string };
    const api = new BrandApi({ baseUrl: base, publishableKey });
    const url = api.publicImageUrl("github", { format: "svg" });
    expect((await fetch(url, { headers: { origin: "https://app.example.com" } })).status).toBe(200);
    await expectError(
      await fetch(url, { headers: { origin: "https://other.test" } }),
      403,
      "origin_not_allowed",
    );
  });
});

test("packages/client/src/routes.ts is what the app's OpenAPI document describes", async () => {
  const doc = await (await t.req("/swagger/json")).json();
  const file = join(ROOT, "packages/client/src/routes.ts");
  const fmt = Bun.spawnSync(
    [join(ROOT, "node_modules/.bin/biome"), "format", `--stdin-file-path=${file}`],
    { stdin: new TextEncoder().encode(routesSource(doc)) },
  );
  // stale: run `bun scripts/build-client.ts`
  expect(fmt.stdout.toString()).toBe(readFileSync(file, "utf8"));
});

describe("the built client on Node and Deno", () => {
  /** The ESM bundle as published (dist/index.js), built into a temp dir. */
  async function bundle(): Promise<string> {
    const out = tempDir();
    const r = Bun.spawnSync(
      [
        process.execPath,
        "build",
        join(ROOT, "packages/client/src/index.ts"),
        "--outdir",
        out,
        "--target",
        "browser",
        "--format",
        "esm",
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    const script = join(out, "run.mjs");
    writeFileSync(
      script,
      `import { BrandApi, BrandApiError } from "./index.js";
const [base, key] = [globalThis.Deno ? Deno.args[0] : process.argv[2], globalThis.Deno ? Deno.args[1] : process.argv[3]];
const api = new BrandApi({ baseUrl: base, apiKey: key });
const github = await api.call("GET /v1/catalog/{slug}", { path: { slug: "github" } });
const png = await api.call("GET /v1/png/{slug}", { path: { slug: "github" }, query: { size: 16 } });
const err = await api.call("GET /v1/catalog/{slug}", { path: { slug: "no-such-brand-zz" } }).catch((e) => e);
const url = await api.imageUrl("github", { format: "webp", size: 32 });
const img = await fetch(url, { headers: { accept: "image/webp" } });
console.log(JSON.stringify({ slug: github.slug, png: png instanceof Uint8Array && png[1] === 0x50, error: err instanceof BrandApiError && err.code, image: img.status }));
`,
    );
    return script;
  }

  const expected = { slug: "github", png: true, error: "service_not_found", image: 200 };

  test("Node >= 20", async () => {
    const script = await bundle();
    const p = Bun.spawn(["node", script, base, pro], { stdout: "pipe", stderr: "pipe" });
    const [out, err] = [await new Response(p.stdout).text(), await new Response(p.stderr).text()];
    expect(await p.exited, err).toBe(0);
    expect(JSON.parse(out)).toEqual(expected);
  });

  test("Deno", async () => {
    const script = await bundle();
    const deno = join(ROOT, "node_modules/.bin/deno");
    const p = Bun.spawn([deno, "run", "--allow-net=127.0.0.1", script, base, pro], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, NO_COLOR: "1" },
    });
    const [out, err] = [await new Response(p.stdout).text(), await new Response(p.stderr).text()];
    expect(await p.exited, err).toBe(0);
    expect(JSON.parse(out)).toEqual(expected);
  });
});
