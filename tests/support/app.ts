import { rmSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../scripts/lib/net";
import { createApp } from "../../src/app";
import { type Config, loadConfig } from "../../src/config";
import { buildDeps, type Deps, openEmbeddedStore, type Store } from "../../src/deps";
import type { Tier } from "../../src/quota/limits";
import type { Principal } from "../../src/quota/principal";
import { CATALOG_FILE, sharedCatalogSource } from "./catalog";
import { checkedHandler, type OpenApiChecker } from "./openapi-check";
import { tempDir } from "./temp";

export { CATALOG_FILE, freePort, tempDir };

export const ADMIN_TOKEN = "test-admin-token-0123456789";
/** The service as `npm start` runs it (the runtime's header cap raised: src/http/request-limits.ts). */
export const SERVICE_CMD = [process.execPath, "--max-http-header-size=131072", "src/main.ts"];

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: tempDir(),
    CATALOG_FILE,
    ADMIN_TOKEN,
    LOG_LEVEL: "error",
    // request lines only where a test asks for them (tests/http/request-log.test.ts)
    LOG_REQUESTS: "off",
    // no 16 MB spill reserve per app (its own tests set it: tests/usage/log/recorder.test.ts and
    // the real-process test in tests/store/embedded/full-disk.test.ts)
    USAGE_SPILL_RESERVE_MB: "0",
    ...env,
  });
}

export interface TestApp {
  deps: Deps;
  /** the app; its `handle` checks every response against /swagger/json (see `checked`) */
  app: ReturnType<typeof createApp>;
  /** the checker of this app's responses (set after the first request) */
  checker?: OpenApiChecker;
  /** app.handle on a path of http://localhost */
  req(path: string, init?: RequestInit): Promise<Response>;
  /** GET with an X-API-Key */
  get(path: string, apiKey: string, headers?: Record<string, string>): Promise<Response>;
  /** POST JSON with an X-API-Key */
  post(path: string, apiKey: string, body: unknown): Promise<Response>;
  /** a fresh account of the tier; returns its API key */
  key(tier?: Tier): Promise<string>;
  close(): Promise<void>;
}

/**
 * The real app over the embedded store in a temp DATA_DIR (or a given store), with the real
 * catalog. `customize` may swap adapters on deps before the app is composed.
 */
export async function makeApp(
  env: Record<string, string> = {},
  opts: { store?: Store; customize?: (deps: Deps) => void | Promise<void> } = {},
): Promise<TestApp> {
  const config = testConfig(env);
  let store = opts.store;
  if (!store) {
    store = openEmbeddedStore(config);
    // the real catalog, parsed once per test run and shared read-only (tests/support/catalog.ts)
    if (config.CATALOG_FILE === CATALOG_FILE) store.catalog = sharedCatalogSource();
  }
  const deps = await buildDeps(config, store);
  await opts.customize?.(deps);
  const app = createApp(deps);
  // every response the tests receive is checked against the app's OpenAPI document
  const result: Partial<TestApp> = {};
  app.handle = checkedHandler(app.handle, (c) => {
    result.checker = c;
  });
  const req = (path: string, init?: RequestInit) =>
    app.handle(new Request(`http://localhost${path}`, init));
  return Object.assign(result, {
    deps,
    app,
    req,
    get: (path, apiKey, headers = {}) =>
      req(path, { headers: { "x-api-key": apiKey, ...headers } }),
    post: (path, apiKey, body) =>
      req(path, {
        method: "POST",
        headers: { "x-api-key": apiKey, "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
    key: async (tier: Tier = "free") => (await deps.accounts.createAccountWithKey({ tier })).apiKey,
    close: async () => {
      await deps.close();
      rmSync(config.DATA_DIR, { recursive: true, force: true });
    },
  } satisfies TestApp);
}

/** Create an account and key through POST /admin/keys (enterprise: with custom daily limits). */
export async function createAccount(
  t: TestApp,
  tier: Tier,
  limits?: Record<string, number | null>,
) {
  const r = await t.req("/admin/keys", {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(limits ? { tier, limits } : { tier }),
  });
  return (await r.json()) as { accountId: string; keyId: string; apiKey: string };
}

/** Create an enterprise account with custom daily limits through POST /admin/keys. */
export const createEnterprise = (t: TestApp, limits: Record<string, number | null>) =>
  createAccount(t, "enterprise", limits);

/** Run `npm run admin -- ...args` (scripts/admin.ts) on the test app's DATA_DIR and catalog. */
export async function runAdmin(t: TestApp, args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, "scripts/admin.ts", ...args], {
    cwd: join(import.meta.dir, "../.."),
    env: {
      ...process.env,
      DATA_DIR: t.deps.config.DATA_DIR,
      CATALOG_FILE: t.deps.config.CATALOG_FILE,
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  return { code, out, err };
}

/**
 * A bearer-token verifier stand-in until the accounts issue lands: the token "acct:<id>"
 * authenticates as that account (key id null), anything else is refused.
 */
export function useAccountIdBearer(deps: Deps) {
  deps.verifyBearer = async (token): Promise<Principal | null> => {
    const a = token.startsWith("acct:") ? await deps.accounts.getAccount(token.slice(5)) : null;
    return a ? { accountId: a.id, keyId: null, tier: a.tier, limits: a.limits } : null;
  };
}

/** Start a real process (bun/deno entry) and wait until it answers /healthz. */
export async function waitForHealth(base: string, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`${base} did not become healthy in ${ms} ms`);
}
