/**
 * A catalog file that cannot be served says why (src/catalog/store/embedded.ts,
 * src/catalog/store/catalog-db.ts): missing, permission denied, not a SQLite database, a database that
 * is no catalog, a JSON catalog that is not valid JSON or too large to read. Each through the
 * real file source and a real CatalogService load, as the service starts.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { CatalogService } from "../../src/catalog/service";
import { FileCatalogSource } from "../../src/catalog/store/embedded";
import { writeCatalogFileSync } from "../../src/catalog/store/schema";
import { tempDir } from "../support/app";
import { brandOf } from "../support/catalog";
import { ALLOWED_SKIPS, testIf } from "../support/skip";

const SOURCES = join(import.meta.dir, "../../src");
const asRoot = process.getuid?.() === 0;
/** run as an unprivileged user (root reads any file) */
const AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];
/** that user can read this checkout's sources (not in a private folder such as /root or a mktemp -d) */
const nobodyReads =
  !asRoot ||
  Bun.spawnSync([...AS_NOBODY, "test", "-r", join(SOURCES, "catalog/service.ts")]).exitCode === 0;
if (!nobodyReads)
  console.log(
    `skipping the permission-denied test: the unprivileged user cannot read ${SOURCES} (a checkout in a private folder)`,
  );

async function loadError(file: string): Promise<string> {
  const catalog = new CatalogService(new FileCatalogSource(file));
  try {
    await catalog.load();
  } catch (err) {
    return (err as Error).message;
  } finally {
    catalog.close();
  }
  throw new Error(`${file} loaded`);
}

describe("a catalog file that cannot be served says why", () => {
  test("missing (JSON or database)", async () => {
    const dir = tempDir();
    for (const name of ["nope.json", "nope.sqlite"]) {
      const msg = await loadError(join(dir, name));
      expect(msg).toContain(`Catalog file ${join(dir, name)} is missing`);
      expect(msg).toContain("npm run build:catalog");
    }
  });

  test("not a SQLite database, and a database that is no catalog", async () => {
    const dir = tempDir();
    const junk = join(dir, "junk.sqlite");
    writeFileSync(junk, "this is not a database, it is a text file of some length ".repeat(200));
    expect(await loadError(junk)).toMatch(/is not a readable SQLite database \(.*not a database/);
    const other = join(dir, "other.sqlite");
    const db = new DatabaseSync(other);
    db.exec("CREATE TABLE t (x)");
    db.close();
    expect(await loadError(other)).toMatch(/is a SQLite database but not a catalog/);
  });

  test("a JSON catalog that is not valid JSON, or too large to read as one string", async () => {
    const dir = tempDir();
    const broken = join(dir, "broken.json");
    writeFileSync(broken, '{"version":"x","brands":[{"id":1,');
    expect(await loadError(broken)).toMatch(/is not a valid JSON catalog: /);
    // sparse: no disk used; refused from its size before any read
    const big = join(dir, "big.json");
    writeFileSync(big, "");
    truncateSync(big, 600 * 2 ** 20);
    expect(await loadError(big)).toMatch(/is too large to read as JSON \(600 MB, at most 512 MB\)/);
  });

  testIf(nobodyReads, ALLOWED_SKIPS.checkoutUnreadable)(
    "permission denied (checked as an unprivileged user: root reads any file)",
    async () => {
      const dir = tempDir();
      const file = join(dir, "catalog.sqlite");
      // a real catalog database, unreadable to anyone but root
      writeCatalogFileSync(
        file,
        { version: "v1", builtAt: "" },
        [brandOf("acme")],
        (f) => new DatabaseSync(f),
      );
      chmodSync(file, 0o000);
      chmodSync(dir, 0o755);
      const script = `
      const { CatalogService } = await import(${JSON.stringify(join(SOURCES, "catalog/service.ts"))});
      const { FileCatalogSource } = await import(${JSON.stringify(join(SOURCES, "catalog/store/embedded.ts"))});
      try { await new CatalogService(new FileCatalogSource(${JSON.stringify(file)})).load(); console.log("loaded"); }
      catch (e) { console.log(e.message); }`;
      const cmd = [...(asRoot ? AS_NOBODY : []), process.execPath, "-e", script];
      const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", cwd: "/" });
      const [out, err] = [
        await new Response(proc.stdout).text(),
        await new Response(proc.stderr).text(),
      ];
      await proc.exited;
      expect([out.trim(), err]).toEqual([
        expect.stringMatching(
          /^Catalog file .* cannot be opened \(unable to open database file\): check the file's and its folder's owner and mode\.$/,
        ),
        "",
      ]);
    },
    30_000,
  );
});
