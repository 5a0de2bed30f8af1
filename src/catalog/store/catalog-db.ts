/**
 * The running catalog's database connection: a private temporary SQLite database (the overlay:
 * brands added or changed at run time, written through CatalogWriter) with the built catalog
 * file attached read-only as `base`. Every read asks the overlay and the base; a brand in the
 * overlay shadows the base's brand of the same id. Reloading a new build is one DETACH and
 * ATTACH (the statements re-prepare themselves), the overlay stays.
 */
import { existsSync } from "node:fs";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { Brand, StoredSvg, Variant } from "../built-catalog";
import type { Entry } from "../search/entry";
import { CatalogWriter, createSchema } from "./schema";

export interface CatalogMeta {
  version: string;
  builtAt: string;
  brands: number;
  artwork: number;
}

export interface TermRow {
  term: string;
  field: number;
  id: number;
}

/** A file path as a read-only SQLite URI. */
function readOnlyUri(file: string): string {
  return `file:${file.split("/").map(encodeURIComponent).join("/")}?mode=ro`;
}

/** Read a catalog file's meta table (throws SQLite's error for a file that is no catalog). */
export function readMeta(db: DatabaseSync, schema = "main"): CatalogMeta {
  const rows = db.prepare(`SELECT key, value FROM ${schema}.meta`).all() as {
    key: string;
    value: string;
  }[];
  const m = new Map(rows.map((r) => [r.key, r.value]));
  const version = m.get("version");
  if (!version) throw new Error("the file has no catalog version (meta table)");
  return {
    version,
    builtAt: m.get("builtAt") ?? "",
    brands: Number(m.get("brands") ?? 0),
    artwork: Number(m.get("artwork") ?? 0),
  };
}

/**
 * A catalog file SQLite refused, with the reason an operator reads: missing, permission denied,
 * not a database (or damaged), not a catalog (no meta table).
 */
export function catalogFileError(file: string, err: unknown): Error {
  const e = err as { code?: string; errcode?: number; message?: string };
  const msg = String(e.message ?? err);
  const primary = typeof e.errcode === "number" ? e.errcode & 0xff : -1;
  let reason: string;
  if (!existsSync(file))
    reason = "is missing: run `npm run build:catalog` (it runs on npm install/start)";
  else if (primary === 14 || /unable to open/i.test(msg))
    reason = `cannot be opened (${msg}): check the file's and its folder's owner and mode`;
  else if (primary === 26 || primary === 11 || /not a database|malformed/i.test(msg))
    reason = `is not a readable SQLite database (${msg}): rebuild it with \`npm run build:catalog\``;
  else if (/no such table|no catalog version/i.test(msg))
    reason = `is a SQLite database but not a catalog (${msg}): rebuild it with \`npm run build:catalog\``;
  else reason = `cannot be read: ${msg}`;
  return new Error(`Catalog file ${file} ${reason}.`);
}

/** The meta of a catalog database file, or the reason it is none (catalogFileError). */
export function readCatalogMeta(file: string): CatalogMeta {
  let db: DatabaseSync | null = null;
  try {
    db = new DatabaseSync(readOnlyUri(file), { readOnly: true });
    const meta = readMeta(db);
    db.prepare("SELECT id, slug, doc, entry FROM brands LIMIT 1").get();
    return meta;
  } catch (err) {
    throw catalogFileError(file, err);
  } finally {
    db?.close();
  }
}

export class CatalogDb {
  private db = new DatabaseSync("");
  private writer: CatalogWriter;
  private st = new Map<string, StatementSync>();
  meta: CatalogMeta | null = null;
  /** brands in the overlay whose id the base lacks */
  private added = 0;

  constructor() {
    createSchema(this.db, { overlay: true });
    this.writer = new CatalogWriter(this.db, {
      host: (h) => this.get("SELECT 1 FROM base.domains WHERE host = ?", h) !== undefined,
      label: (l) =>
        this.get("SELECT 1 FROM base.labels WHERE label = ?", l) !== undefined ||
        this.get("SELECT 1 FROM main.labels WHERE label = ?", l) !== undefined,
      slug: (s) => this.idBySlug(s) !== undefined,
    });
  }

  private stmt(sql: string): StatementSync {
    let s = this.st.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.st.set(sql, s);
    }
    return s;
  }

  private get(sql: string, ...args: (string | number | null)[]) {
    return this.stmt(sql).get(...args) as Record<string, unknown> | undefined;
  }

  private all(sql: string, ...args: (string | number | null)[]) {
    return this.stmt(sql).all(...args) as Record<string, unknown>[];
  }

  /**
   * Attach a catalog file as the base (replacing the one attached): checks that it is a
   * catalog, then swaps in one synchronous step. Returns its meta.
   */
  attach(file: string): CatalogMeta {
    // checked on a connection of its own first: a bad file leaves the current base
    const meta = readCatalogMeta(file);
    if (this.meta) this.db.exec("DETACH DATABASE base");
    this.db.prepare("ATTACH DATABASE ? AS base").run(readOnlyUri(file));
    // the hot pages of the lookup tables stay in SQLite's cache (bounded, 32 MiB)
    this.db.exec("PRAGMA base.cache_size = -32768");
    this.meta = meta;
    this.added = Number(
      (
        this.get(
          "SELECT count(*) AS n FROM main.brands o WHERE NOT EXISTS (SELECT 1 FROM base.brands b WHERE b.id = o.id)",
        ) as { n: number }
      ).n,
    );
    return meta;
  }

  get attached() {
    return this.meta !== null;
  }

  /** Brands in the catalog: the base's plus those only the overlay has. */
  get size() {
    return this.meta ? this.meta.brands + this.added : 0;
  }

  /** The brand's stored JSON and where it is (overlay first). */
  private docRow(id: number): { doc: string; overlay: boolean } | undefined {
    const o = this.get("SELECT doc FROM main.brands WHERE id = ?", id);
    if (o) return { doc: o.doc as string, overlay: true };
    if (!this.meta) return undefined;
    const b = this.get("SELECT doc FROM base.brands WHERE id = ?", id);
    return b ? { doc: b.doc as string, overlay: false } : undefined;
  }

  /** The whole brand, SVG markup included. */
  brand(id: number): Brand | undefined {
    const row = this.docRow(id);
    if (!row) return undefined;
    const brand = JSON.parse(row.doc) as Brand;
    const variants: Partial<Record<Variant, StoredSvg>> = {};
    const rows = this.all(
      `SELECT variant, sha256, source, svg FROM ${row.overlay ? "main" : "base"}.variants WHERE id = ?`,
      id,
    );
    for (const r of rows)
      variants[r.variant as Variant] = {
        svg: r.svg as string,
        sha256: r.sha256 as string,
        source: r.source as string,
      };
    brand.variants = variants;
    return brand;
  }

  /** The id a slug names: a live slug first, then a retired one. */
  idBySlug(slug: string): number | undefined {
    for (const sql of [
      "SELECT id FROM main.brands WHERE slug = ?",
      "SELECT id FROM base.brands WHERE slug = ?",
      "SELECT id FROM base.slugs WHERE slug = ?",
      "SELECT id FROM main.slugs WHERE slug = ?",
    ]) {
      if (!this.meta && sql.includes("base.")) continue;
      const r = this.get(sql, slug);
      if (r) return r.id as number;
    }
    return undefined;
  }

  /** The brand a host names (the base's claim first: it was settled by the build). */
  idByHost(host: string): number | undefined {
    const r =
      (this.meta && this.get("SELECT id FROM base.domains WHERE host = ?", host)) ||
      this.get("SELECT id FROM main.domains WHERE host = ?", host);
    return r ? (r.id as number) : undefined;
  }

  /** The international brand that owns a registrable label, if one does. */
  idByLabel(label: string): number | undefined {
    const r =
      (this.meta && this.get("SELECT id FROM base.labels WHERE label = ?", label)) ||
      this.get("SELECT id FROM main.labels WHERE label = ?", label);
    return r ? (r.id as number) : undefined;
  }

  /** Ids of the brands a string finds exactly. */
  exactIds(key: string): number[] {
    const rows = [
      ...(this.meta ? this.all("SELECT id FROM base.exact WHERE key = ?", key) : []),
      ...this.all("SELECT id FROM main.exact WHERE key = ?", key),
    ];
    return rows.map((r) => r.id as number);
  }

  /** The brands each of these strings finds exactly, as [key, id] rows (one query per database). */
  exactRows(keys: Iterable<string>): [string, number][] {
    const list = JSON.stringify([...keys]);
    const sql = (db: string) =>
      `SELECT key, id FROM ${db}.exact WHERE key IN (SELECT value FROM json_each(?1))`;
    // one statement for both databases: one call into SQLite per lookup
    const rows = this.meta
      ? this.all(`${sql("base")} UNION ALL ${sql("main")}`, list)
      : this.all(sql("main"), list);
    return rows.map((r) => [r.key as string, r.id as number]);
  }

  /**
   * Term rows whose term starts with `prefix`, the most promising first (popular brands, short
   * terms), at most `limit` from each database. Of a wide prefix only the first `scan` rows in
   * term order are weighed (shorter terms first within each next letter), so one lookup
   * stays bounded on any catalog.
   */
  termsWithPrefix(prefix: string, limit: number, scan = limit * 4): TermRow[] {
    const sql = (db: string) =>
      `SELECT term, field, id FROM (SELECT term, field, id, pop FROM ${db}.terms WHERE term >= ?1 AND term < ?2 LIMIT ?4) ORDER BY pop * 2 - length(term) DESC LIMIT ?3`;
    const end = `${prefix}\u{10ffff}`;
    return [
      ...(this.meta ? this.all(sql("base"), prefix, end, limit, scan) : []),
      ...this.all(sql("main"), prefix, end, limit, scan),
    ] as unknown as TermRow[];
  }

  /** Term rows of exactly these terms. */
  termRows(terms: Iterable<string>): TermRow[] {
    const list = JSON.stringify([...terms]);
    const sql = (db: string) =>
      `SELECT term, field, id FROM ${db}.terms WHERE term IN (SELECT value FROM json_each(?))`;
    return [
      ...(this.meta ? this.all(sql("base"), list) : []),
      ...this.all(sql("main"), list),
    ] as unknown as TermRow[];
  }

  /**
   * Vocabulary words found by typo keys (see deletionKeys): with `exact`, only the keys that are
   * words themselves.
   */
  wordsByTypoKeys(keys: Iterable<string>, exact = false): string[] {
    const list = JSON.stringify([...keys]);
    const sql = (db: string) =>
      `SELECT term FROM ${db}.typo_keys WHERE key IN (SELECT value FROM json_each(?))${exact ? " AND term = key" : ""}`;
    return [...(this.meta ? this.all(sql("base"), list) : []), ...this.all(sql("main"), list)].map(
      (r) => r.term as string,
    );
  }

  /** Vocabulary words holding `part` (3+ characters), at most `limit` from each database. */
  wordsContaining(part: string, limit: number): string[] {
    // an FTS5 string ends at a NUL: control characters are left out of the phrase
    const clean = part.replace(/\p{Cc}/gu, "");
    if ([...clean].length < 3) return [];
    const phrase = `"${clean.replaceAll('"', '""')}"`;
    const sql = (db: string) => `SELECT term FROM ${db}.vocab WHERE vocab MATCH ? LIMIT ?`;
    return [
      ...(this.meta ? this.all(sql("base"), phrase, limit) : []),
      ...this.all(sql("main"), phrase, limit),
    ].map((r) => r.term as string);
  }

  /** The search entry of a brand (overlay first). */
  entry(id: number): Entry | undefined {
    const r =
      this.get("SELECT entry FROM main.brands WHERE id = ?", id) ??
      (this.meta ? this.get("SELECT entry FROM base.brands WHERE id = ?", id) : undefined);
    return r ? (JSON.parse(r.entry as string) as Entry) : undefined;
  }

  /** Ids of one page in id order; `artwork` true: brands with SVGs, false: without, undefined: all. */
  page(limit: number, offset: number, artwork?: boolean): number[] {
    if (!this.meta) return [];
    const where = artwork === undefined ? "" : `artwork = ${artwork ? 1 : 0}`;
    const rows = this.all(
      `SELECT id FROM base.brands b WHERE ${where ? `${where} AND ` : ""}NOT EXISTS (SELECT 1 FROM main.brands o WHERE o.id = b.id)
       UNION ALL SELECT id FROM main.brands ${where ? `WHERE ${where}` : ""}
       ORDER BY id LIMIT ? OFFSET ?`,
      limit,
      offset,
    );
    return rows.map((r) => r.id as number);
  }

  /** Number of brands with (true) or without (false) artwork, or of all. */
  total(artwork?: boolean): number {
    if (!this.meta) return 0;
    if (artwork === undefined) return this.size;
    const base = artwork ? this.meta.artwork : this.meta.brands - this.meta.artwork;
    const a = artwork ? 1 : 0;
    const shadowed = this.get(
      "SELECT count(*) AS n FROM main.brands o JOIN base.brands b ON b.id = o.id WHERE b.artwork = ?",
      a,
    ) as { n: number };
    const own = this.get("SELECT count(*) AS n FROM main.brands WHERE artwork = ?", a) as {
      n: number;
    };
    return base - Number(shadowed.n) + Number(own.n);
  }

  /** Add or replace a brand in the overlay. */
  put(brand: Brand) {
    const inBase = this.meta
      ? this.get("SELECT 1 FROM base.brands WHERE id = ?", brand.id) !== undefined
      : false;
    const before = this.get("SELECT 1 FROM main.brands WHERE id = ?", brand.id) !== undefined;
    this.db.exec("BEGIN");
    try {
      if (before) this.writer.remove(brand.id);
      this.writer.put(brand, { labels: true });
      this.db.exec("COMMIT");
    } catch (err) {
      this.db.exec("ROLLBACK");
      throw err;
    }
    if (!inBase && !before) this.added++;
  }

  /** Remove a brand from the overlay (the base's brand of the same id, if any, shows again). */
  remove(id: number) {
    if (this.get("SELECT 1 FROM main.brands WHERE id = ?", id) === undefined) return;
    const inBase = this.meta
      ? this.get("SELECT 1 FROM base.brands WHERE id = ?", id) !== undefined
      : false;
    this.writer.remove(id);
    if (!inBase) this.added--;
  }

  /** Every brand in id order (scripts and tests; not for the request path). */
  *each(): Generator<Brand> {
    let after = -1;
    for (;;) {
      const ids = this.idsAfter(after, 1000);
      if (!ids.length) return;
      for (const id of ids) {
        const b = this.brand(id);
        if (b) yield b;
      }
      after = ids[ids.length - 1] as number;
    }
  }

  /**
   * Every brand of the built catalog (the base, not the overlay) by its slug, name and
   * variants' sha256 and source, in id order: what a build changed is told from these.
   */
  builtBrands(): {
    id: number;
    slug: string;
    name: string;
    variants: Partial<Record<Variant, { sha256: string; source: string }>>;
  }[] {
    if (!this.meta) return [];
    const rows = this.all(
      `SELECT b.id, b.slug, b.name, v.variant, v.sha256, v.source FROM base.brands b
       LEFT JOIN base.variants v ON v.id = b.id ORDER BY b.id`,
    );
    const out: ReturnType<CatalogDb["builtBrands"]> = [];
    for (const r of rows) {
      let last = out[out.length - 1];
      if (last === undefined || last.id !== r.id) {
        last = { id: r.id as number, slug: r.slug as string, name: r.name as string, variants: {} };
        out.push(last);
      }
      if (r.variant)
        last.variants[r.variant as Variant] = {
          sha256: r.sha256 as string,
          source: r.source as string,
        };
    }
    return out;
  }

  private idsAfter(after: number, limit: number): number[] {
    const rows = this.all(
      `SELECT id FROM base.brands WHERE id > ?1 UNION SELECT id FROM main.brands WHERE id > ?1 ORDER BY id LIMIT ?2`,
      after,
      limit,
    );
    return rows.map((r) => r.id as number);
  }

  close() {
    this.db.close();
  }
}
