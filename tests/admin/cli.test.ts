import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Database, DB_FILE } from "../../src/store/embedded/db";
import { makeApp, runAdmin, type TestApp, tempDir } from "../support/app";
import { expectError } from "../support/errors";

// spawns processes or builds several apps: slow on a loaded machine (bun's default is 5 s)
setDefaultTimeout(60_000);

let t: TestApp;
beforeAll(async () => {
  // no key cache: a key the CLI revokes is refused by the running app on its next request
  t = await makeApp({ KEY_CACHE_TTL_MS: "0" });
});
afterAll(() => t.close());

/** Runs `npm run admin -- ...args` (scripts/admin.ts) on the test app's DATA_DIR. */
const admin = (args: string[], env: Record<string, string> = {}) => runAdmin(t, args, env);

const COMMANDS: [string[], string[]][] = [
  [["accounts", "list"], ["--email"]],
  [["accounts", "show"], ["<accountId>"]],
  [
    ["accounts", "set-tier"],
    ["<accountId>", "--tier", "--limits"],
  ],
  [
    ["keys", "create"],
    ["--tier", "--email", "--limits"],
  ],
  [["keys", "list"], ["<accountId>"]],
  [["keys", "revoke"], ["<keyId>"]],
  [
    ["publishable-keys", "create"],
    ["<accountId>", "--origin", "--daily-cap"],
  ],
  [["publishable-keys", "revoke"], ["<keyId>"]],
  [["projections", "rebuild"], []],
  [["misses"], ["--since", "--kind", "--limit"]],
  [["db", "check"], []],
];

describe("admin CLI --help", () => {
  test("every command prints its usage and options, exits 0 and runs nothing", async () => {
    const before = await t.deps.accounts.listAccounts({ limit: 1000 });
    const runs = await Promise.all(COMMANDS.map(([cmd]) => admin([...cmd, "--help"])));
    for (const [i, [cmd, options]] of COMMANDS.entries()) {
      const r = runs[i]!;
      expect({ cmd, code: r.code, err: r.err }).toEqual({ cmd, code: 0, err: "" });
      expect(r.out).toContain(`Usage: admin ${cmd.join(" ")}`);
      for (const o of options) expect(r.out).toContain(o);
    }
    // keys create --help created no account
    expect(await t.deps.accounts.listAccounts({ limit: 1000 })).toEqual(before);
    const top = await admin(["--help"]);
    expect(top.code).toBe(0);
    for (const group of ["accounts", "keys", "projections"]) expect(top.out).toContain(group);
  });
});

describe("admin CLI commands", () => {
  test("keys create, accounts list/show, keys list, keys revoke, publishable-keys, accounts set-tier", async () => {
    const created = await admin(["keys", "create", "--tier", "pro", "--email", "cli@admin.test"]);
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.out) as { accountId: string; keyId: string; apiKey: string };
    expect((await t.get("/v1/catalog/github", issued.apiKey)).status).toBe(200);

    const listed = await admin(["accounts", "list", "--email", "CLI@admin.test"]);
    expect(JSON.parse(listed.out).map((a: { accountId: string }) => a.accountId)).toEqual([
      issued.accountId,
    ]);
    const shown = JSON.parse((await admin(["accounts", "show", issued.accountId])).out);
    expect(shown).toMatchObject({ accountId: issued.accountId, tier: "pro" });
    const keys = JSON.parse((await admin(["keys", "list", issued.accountId])).out);
    expect(keys).toEqual([
      {
        id: issued.keyId,
        prefix: expect.any(String),
        createdAt: expect.any(String),
        revokedAt: null,
      },
    ]);
    expect(JSON.stringify([shown, keys])).not.toContain(issued.apiKey);

    const revoked = await admin(["keys", "revoke", issued.keyId]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.out)).toMatchObject({
      keyId: issued.keyId,
      revokedAt: expect.any(String),
    });
    // the running app (same DATA_DIR) refuses the key now
    await expectError(await t.get("/v1/catalog/github", issued.apiKey), 401, "invalid_api_key");

    const pk = await admin([
      "publishable-keys",
      "create",
      issued.accountId,
      "--origin",
      "app.example.com",
      "*.example.org",
      "--daily-cap",
      "100",
    ]);
    expect(pk.code).toBe(0);
    const made = JSON.parse(pk.out) as { keyId: string; publishableKey: string; origins: string[] };
    expect(made).toMatchObject({ origins: ["app.example.com", "*.example.org"], dailyCap: 100 });
    const bad = await admin([
      "publishable-keys",
      "create",
      issued.accountId,
      "--origin",
      "https://x",
    ]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("--origin https://x");
    const pkRevoked = await admin(["publishable-keys", "revoke", made.keyId]);
    expect(JSON.parse(pkRevoked.out)).toMatchObject({
      keyId: made.keyId,
      revokedAt: expect.any(String),
    });
    expect((await admin(["publishable-keys", "revoke", "ffffffffffffffff"])).code).toBe(1);

    const tier = await admin(["accounts", "set-tier", issued.accountId, "--tier", "free"]);
    expect(JSON.parse(tier.out)).toEqual({
      accountId: issued.accountId,
      tier: "free",
      limits: null,
    });
  });

  test("bad input is one line on stderr and a non-zero exit, never a stack trace", async () => {
    const cases: [string[], RegExp][] = [
      [["keys", "create", "--tier", "gold"], /--tier/],
      [["keys", "create"], /required option '--tier <tier>'/],
      [["keys", "create", "--tier", "free", "--limits", "{nope"], /--limits must be a JSON object/],
      [["keys", "create", "--tier", "enterprise", "--limits", '{"svgs":5}'], /unknown bucket/],
      [["accounts", "show", "no-such-account"], /No account no-such-account/],
      [["accounts", "show"], /missing required argument/],
      [["keys", "revoke", "0123456789abcdef"], /No key 0123456789abcdef/],
      [["accounts", "sett"], /unknown command/],
      [["frobnicate"], /unknown command/],
      [["keys", "list", "x", "--bogus"], /unknown option '--bogus'/],
      [["counters", "rebuild"], /No shared counter store/],
    ];
    const runs = await Promise.all(cases.map(([args]) => admin(args)));
    for (const [i, [args, message]] of cases.entries()) {
      const r = runs[i]!;
      expect({ args, code: r.code === 0 }).toEqual({ args, code: false });
      expect(r.err).toMatch(message);
      expect(r.err.trim().split("\n")).toHaveLength(1);
      expect(r.err).not.toMatch(/\n\s+at /);
    }
    const config = await admin(["accounts", "list"], { PORT: "abc" });
    expect(config.code).toBe(1);
    expect(config.err.trim()).toMatch(/^error: Configuration error: PORT: /);
  });

  test("db check: ok on a sound database; on a damaged one the problems, exit 1", async () => {
    const ok = await admin(["db", "check"]);
    expect(ok).toMatchObject({ code: 0, out: "ok\n", err: "" });

    // a database with one page overwritten (as a failing disk would leave it)
    const dir = tempDir();
    const path = join(dir, DB_FILE);
    const db = new Database(path);
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    db.tx(() => {
      for (let i = 0; i < 2000; i++) db.run("INSERT INTO t (v) VALUES (?)", `value ${i}`);
    });
    db.close();
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(200, 0x41), 0, 200, 4096 * 5 + 100);
    closeSync(fd);
    const bad = await admin(["db", "check"], { DATA_DIR: dir });
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/page 6/);
    expect(bad.err.trim()).toMatch(/^error: db check: .*brand-api\.sqlite has problems/);

    const none = await admin(["db", "check"], { DATA_DIR: tempDir() });
    expect(none.code).toBe(1);
    expect(none.err.trim()).toMatch(/^error: db check: no database at /);
  });
});
