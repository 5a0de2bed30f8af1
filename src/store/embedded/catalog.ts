import { readFile, stat } from "node:fs/promises";
import type { CatalogSource } from "../../catalog/port";
import type { BuiltCatalog } from "../../catalog/types";

/** Embedded catalog: the built catalog file, read into memory. */
export class FileCatalogSource implements CatalogSource {
  private cached: { mtimeMs: number; version: string } | null = null;

  constructor(private file: string) {}

  async load(): Promise<BuiltCatalog> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch {
      throw new Error(
        `Catalog file ${this.file} is missing: run \`npm run build:catalog\` (it runs on npm install/start).`,
      );
    }
    const built = JSON.parse(text) as BuiltCatalog;
    this.cached = { mtimeMs: (await stat(this.file)).mtimeMs, version: built.version };
    return built;
  }

  async version(): Promise<string | null> {
    try {
      const { mtimeMs } = await stat(this.file);
      if (this.cached && this.cached.mtimeMs === mtimeMs) return this.cached.version;
      const built = JSON.parse(await readFile(this.file, "utf8")) as BuiltCatalog;
      this.cached = { mtimeMs, version: built.version };
      return built.version;
    } catch {
      return null;
    }
  }
}
