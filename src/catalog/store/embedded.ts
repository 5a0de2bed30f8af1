import { closeSync, openSync, readSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { BuiltCatalog } from "../built-catalog";
import { CatalogDb, catalogFileError, readCatalogMeta } from "./catalog-db";
import type { CatalogSource } from "./port";
import { writeCatalogFile } from "./schema";

/**
 * Largest JSON catalog read (into one string, then parsed): beyond it the runtime's string
 * limit and the parse's memory fail; larger catalogs are served from their database only.
 */
const JSON_MAX_BYTES = 512 * 2 ** 20;

const BUILD_HINT = "run `npm run build:catalog` (it runs on npm install/start)";

/** The catalog database served for a JSON catalog: the file beside it (`*.sqlite`). */
export const databaseBeside = (jsonFile: string) => jsonFile.replace(/\.json$/, ".sqlite");

/** Why a catalog file cannot be read, as an operator reads it (not found, permission, ...). */
function fsReason(file: string, err: unknown): Error {
  const code = (err as { code?: string }).code;
  if (code === "ENOENT") return new Error(`Catalog file ${file} is missing: ${BUILD_HINT}.`);
  if (code === "EACCES" || code === "EPERM")
    return new Error(
      `Catalog file ${file} cannot be read: permission denied (check the file's owner and mode).`,
    );
  if (code === "EISDIR") return new Error(`Catalog file ${file} is a directory, not a file.`);
  return new Error(`Catalog file ${file} cannot be read: ${(err as Error).message}`);
}

/** The version a JSON catalog states in its first bytes (`{"version":"..."`), else null. */
function jsonHeadVersion(file: string): string | null {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, 256, 0);
    return /^\{"version":"([^"]+)"/.exec(buf.subarray(0, n).toString("utf8"))?.[1] ?? null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Embedded catalog: the built catalog database file (CATALOG_FILE), opened read-only. A JSON
 * catalog (`*.json`, the BuiltCatalog shape) is served through the database file beside it
 * (`*.sqlite`, which the build writes too), written from the JSON when that file is missing or
 * holds another version.
 */
export class FileCatalogSource implements CatalogSource {
  private cached: { mtimeMs: number; version: string } | null = null;

  constructor(private path: string) {}

  async file(): Promise<string> {
    try {
      await stat(this.path);
    } catch (err) {
      // a JSON catalog whose database was written beside it
      if (this.isJson && (await this.fresh(this.dbBeside, null))) return this.dbBeside;
      throw fsReason(this.path, err);
    }
    if (!this.isJson) {
      readCatalogMeta(this.path); // throws the reason a file is no catalog database
      return this.path;
    }
    const version = jsonHeadVersion(this.path);
    for (const candidate of [this.dbBeside, this.dbInTmp(version)])
      if (version && (await this.fresh(candidate, version))) return candidate;
    return this.convert();
  }

  private get isJson() {
    return this.path.endsWith(".json");
  }

  private get dbBeside() {
    return databaseBeside(this.path);
  }

  private dbInTmp(version: string | null) {
    return join(tmpdir(), `bapi-${basename(this.path, ".json")}-${version}.sqlite`);
  }

  /** Whether `file` is a catalog database of `version` (any version when null). */
  private async fresh(file: string, version: string | null): Promise<boolean> {
    try {
      const meta = readCatalogMeta(file);
      return version === null || meta.version === version;
    } catch {
      return false;
    }
  }

  /** Write the JSON catalog into a database file (beside it, else in the temp dir). */
  private async convert(): Promise<string> {
    const { size } = await stat(this.path);
    if (size > JSON_MAX_BYTES)
      throw new Error(
        `Catalog file ${this.path} is too large to read as JSON (${Math.round(size / 2 ** 20)} MB, at most ${JSON_MAX_BYTES / 2 ** 20} MB): point CATALOG_FILE at the catalog database (.sqlite) that \`npm run build:catalog\` writes.`,
      );
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (err) {
      throw fsReason(this.path, err);
    }
    let built: BuiltCatalog;
    try {
      built = JSON.parse(text) as BuiltCatalog;
      if (typeof built?.version !== "string" || !Array.isArray(built.brands))
        throw new Error("no version and brands at its top level");
    } catch (err) {
      throw new Error(
        `Catalog file ${this.path} is not a valid JSON catalog: ${(err as Error).message}`,
      );
    }
    const brands = [...built.brands].sort((a, b) => a.id - b.id);
    for (const target of [this.dbBeside, this.dbInTmp(built.version)]) {
      try {
        await writeCatalogFile(target, built, brands, (f) => new DatabaseSync(f));
        return target;
      } catch (err) {
        if (target !== this.dbBeside) throw catalogFileError(target, err);
      }
    }
    throw new Error("unreachable");
  }

  /** The whole catalog as data (seeding MongoDB, scripts and tests; never the request path). */
  async load(): Promise<BuiltCatalog> {
    if (this.isJson) {
      try {
        return JSON.parse(await readFile(this.path, "utf8")) as BuiltCatalog;
      } catch (err) {
        if (err instanceof SyntaxError)
          throw new Error(`Catalog file ${this.path} is not a valid JSON catalog: ${err.message}`);
        throw fsReason(this.path, err);
      }
    }
    const db = new CatalogDb();
    try {
      const meta = db.attach(await this.file());
      return { version: meta.version, builtAt: meta.builtAt, brands: [...db.each()] };
    } finally {
      db.close();
    }
  }

  async version(): Promise<string | null> {
    try {
      const { mtimeMs } = await stat(this.path);
      if (this.cached && this.cached.mtimeMs === mtimeMs) return this.cached.version;
      const version = this.isJson ? jsonHeadVersion(this.path) : readCatalogMeta(this.path).version;
      if (!version) return null;
      this.cached = { mtimeMs, version };
      return version;
    } catch {
      return null;
    }
  }
}
