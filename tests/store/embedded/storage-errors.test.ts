/**
 * The embedded database refusing writes, through the real app: another process holding the
 * write lock past the wait, and a read-only database. Writes answer 503 storage_unavailable
 * (never a 500) with one log line saying why; reads go on; once the condition is gone, writes
 * work again. A database file that is not a database stops the start-up with one log line.
 * (A full disk: full-disk.test.ts, on a real tmpfs.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { captureLogs } from "../../../src/platform/log";
import { DB_FILE } from "../../../src/store/embedded/db";
import { makeAuthApp } from "../../accounts/helpers";
import { ADMIN_TOKEN } from "../../support/app";
import { tempDir } from "../../support/temp";

let t: Awaited<ReturnType<typeof makeAuthApp>>;
let key: string;
beforeAll(async () => {
  t = await makeAuthApp();
  key = await t.key("pro");
  // the e-mail index secret exists: the refused write below is the account's own
  expect(
    (
      await t.json("/auth/register", {
        email: "first@example.com",
        password: "correct horse battery",
      })
    ).status,
  ).toBe(201);
  // the service waits 5 s for a lock by default; the test need not
  t.deps.store.db?.exec("PRAGMA busy_timeout = 200");
});
afterAll(() => t.close());

const createKey = () =>
  t.req("/admin/keys", {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ tier: "free" }),
  });

/** Two writes (an operator's, a user's) refused with 503, each logged once with `code` and `cause`. */
async function refusedWrites(code: string, cause: string) {
  const logs = captureLogs();
  try {
    const admin = await createKey();
    expect(admin.status).toBe(503);
    expect(await admin.json()).toEqual({
      error: "storage_unavailable",
      message: expect.stringContaining("Retry later"),
    });
    expect(Number(admin.headers.get("retry-after"))).toBeGreaterThan(0);
    const register = await t.json("/auth/register", {
      email: `locked-${Date.now()}@example.com`,
      password: "correct horse battery",
    });
    expect(register.status).toBe(503);
    expect(((await register.json()) as { error: string }).error).toBe("storage_unavailable");
    // reads go on: the key checks out, its account is read
    const account = await t.deps.accounts.verifyKey(key);
    expect(await t.deps.store.accounts.getAccount(account?.accountId as string)).not.toBeNull();
  } finally {
    logs.restore();
  }
  const lines = logs.lines.filter(
    (l) => l.msg === "storage unavailable: write refused, answered 503",
  );
  expect(lines).toHaveLength(2);
  for (const l of lines) {
    expect(l).toMatchObject({ level: "error", code });
    expect(String(l.error)).toContain(cause);
  }
}

test("another process holds the write lock: 503 storage_unavailable, logged as EBUSY; writes work once it lets go", async () => {
  const other = new DatabaseSync(join(t.deps.config.DATA_DIR, DB_FILE));
  other.exec("BEGIN IMMEDIATE");
  try {
    await refusedWrites("EBUSY", "another process holds the database's write lock");
  } finally {
    other.exec("ROLLBACK");
    other.close();
  }
  expect((await createKey()).status).toBe(201);
});

test("a read-only database: 503 storage_unavailable, logged as EROFS; writes work once it is writable", async () => {
  const db = t.deps.store.db;
  db?.exec("PRAGMA query_only = ON");
  try {
    await refusedWrites("EROFS", "read-only");
  } finally {
    db?.exec("PRAGMA query_only = OFF");
  }
  expect((await createKey()).status).toBe(201);
});

test("a corrupt database file: the service does not start, and says why in one log line", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, DB_FILE), Buffer.alloc(64 * 1024, 0x5a));
  const proc = Bun.spawn([process.execPath, "src/main.ts"], {
    env: { ...process.env, DATA_DIR: dir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await proc.exited).toBe(1);
  const out = `${await new Response(proc.stdout).text()}${await new Response(proc.stderr).text()}`;
  const lines = out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines).toEqual([
    expect.objectContaining({
      level: "error",
      msg: "cannot start: the database refused",
      code: "EIO",
      error: expect.stringContaining("npm run admin -- db check"),
    }),
  ]);
  // no stack trace, nothing but that line
  expect(out).not.toContain("    at ");
}, 30_000);
