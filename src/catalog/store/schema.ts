/**
 * The catalog database: one SQLite file (`node:sqlite`, in Bun and Deno) that
 * `npm run build:catalog` writes and every instance opens read-only, and the same tables in the
 * writable overlay that holds the brands added or changed at run time (CatalogDb).
 *
 *   meta       version, builtAt, brand counts
 *   brands     id, slug, name, artwork (0/1), doc (the brand's JSON without SVG markup),
 *              entry (its search Entry as JSON: src/catalog/search/entry.ts)
 *   slugs      retired slugs that answer with the brand they became
 *   variants   one SVG per brand and variant, with its sha256 and source
 *   domains    host -> brand (the first brand in id order that claims it)
 *   labels     registrable label -> brand, for labels one international brand owns
 *   exact      the strings that find a brand exactly (names, compact names, short forms, ...)
 *   terms      the indexed words of a brand by field, with its popularity: prefix lookups are
 *              range scans of this table's primary key
 *   typo_keys  each word of the names (3+ characters) and its one-deletion forms -> the word
 *   vocab      the same words in an FTS5 table with the trigram tokenizer (substring lookups)
 */
import { renameSync, rmSync } from "node:fs";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { countryOf, isCountrySuffix, normalizeHost, registrableDomain } from "../brand/domain";
import type { Brand, StoredSvg, Variant } from "../built-catalog";
import { deletionKeys, exactKeys, FIELD, TYPO_MIN, termsOf, toEntry } from "../search/entry";

export function createSchema(db: DatabaseSync, opts: { overlay?: boolean } = {}) {
  db.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS brands (
      id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
      artwork INTEGER NOT NULL, doc TEXT NOT NULL, entry TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS brands_artwork ON brands (artwork, id);
    CREATE TABLE IF NOT EXISTS slugs (slug TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS variants (
      id INTEGER NOT NULL, variant TEXT NOT NULL, sha256 TEXT NOT NULL, source TEXT NOT NULL,
      svg TEXT NOT NULL, PRIMARY KEY (id, variant));
    CREATE TABLE IF NOT EXISTS domains (host TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS labels (label TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS exact (key TEXT NOT NULL, id INTEGER NOT NULL,
      PRIMARY KEY (key, id)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS terms (term TEXT NOT NULL, field INTEGER NOT NULL,
      id INTEGER NOT NULL, pop INTEGER NOT NULL, PRIMARY KEY (term, field, id)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS typo_keys (key TEXT NOT NULL, term TEXT NOT NULL,
      PRIMARY KEY (key, term)) WITHOUT ROWID;
    CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5 (term, tokenize = 'trigram');
  `);
  // the overlay removes and replaces brands: its rows are also found by brand id
  if (opts.overlay)
    db.exec(`
      CREATE INDEX IF NOT EXISTS slugs_id ON slugs (id);
      CREATE INDEX IF NOT EXISTS domains_id ON domains (id);
      CREATE INDEX IF NOT EXISTS labels_id ON labels (id);
      CREATE INDEX IF NOT EXISTS exact_id ON exact (id);
      CREATE INDEX IF NOT EXISTS terms_id ON terms (id);
    `);
}

/** A catalog domain as stored, in the same form normalizeHost gives for user input. */
export function domainKey(domain: string): string | null {
  const h = normalizeHost(domain);
  return h.ok ? h.host : null;
}

/** The label of a registrable domain and its public suffix ("amazon.co.jp" -> amazon, co.jp). */
export function splitRegistrable(domain: string): [string, string] {
  const dot = domain.indexOf(".");
  return [domain.slice(0, dot), domain.slice(dot + 1)];
}

/** The brand's JSON as stored in `brands.doc`: every field but the SVG markup. */
export function docOf(brand: Brand): string {
  const variants: Record<string, { sha256: string; source: string }> = {};
  for (const [v, s] of Object.entries(brand.variants) as [Variant, StoredSvg][])
    variants[v] = { sha256: s.sha256, source: s.source };
  return JSON.stringify({ ...brand, variants });
}

/**
 * Writes brands into a catalog database (the build, the benchmark's generator, the overlay).
 * `put` claims only the domains, labels and slugs no brand holds yet (the first claim wins,
 * as the build settles them); `finishBuild` derives the labels of a whole built catalog.
 */
export class CatalogWriter {
  private st: Record<string, StatementSync>;

  constructor(
    private db: DatabaseSync,
    /** whether a domain, label, slug or exact key is taken in another database (the base) */
    private takenElsewhere: {
      host(host: string): boolean;
      label(label: string): boolean;
      slug(slug: string): boolean;
    } = { host: () => false, label: () => false, slug: () => false },
  ) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      brand: p(
        "INSERT OR REPLACE INTO brands (id, slug, name, artwork, doc, entry) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      variant: p(
        "INSERT OR REPLACE INTO variants (id, variant, sha256, source, svg) VALUES (?, ?, ?, ?, ?)",
      ),
      slug: p("INSERT OR IGNORE INTO slugs (slug, id) VALUES (?, ?)"),
      domain: p("INSERT OR IGNORE INTO domains (host, id) VALUES (?, ?)"),
      label: p("INSERT OR IGNORE INTO labels (label, id) VALUES (?, ?)"),
      exact: p("INSERT OR IGNORE INTO exact (key, id) VALUES (?, ?)"),
      term: p("INSERT OR IGNORE INTO terms (term, field, id, pop) VALUES (?, ?, ?, ?)"),
      typo: p("INSERT OR IGNORE INTO typo_keys (key, term) VALUES (?, ?)"),
      vocab: p("INSERT INTO vocab (term) VALUES (?)"),
      liveSlug: p("SELECT 1 FROM brands WHERE slug = ?"),
      hostTaken: p("SELECT 1 FROM domains WHERE host = ?"),
    };
  }

  /** Write one brand with everything it is found by. `labels`: claim its labels now (overlay). */
  put(brand: Brand, opts: { labels?: boolean } = {}) {
    const st = this.st;
    const entry = toEntry(brand);
    st.brand?.run(
      brand.id,
      brand.slug,
      brand.name,
      entry.artwork ? 1 : 0,
      docOf(brand),
      JSON.stringify(entry),
    );
    for (const [v, s] of Object.entries(brand.variants) as [Variant, StoredSvg][])
      st.variant?.run(brand.id, v, s.sha256, s.source, s.svg);
    for (const former of brand.formerSlugs ?? [])
      if (!st.liveSlug?.get(former) && !this.takenElsewhere.slug(former))
        st.slug?.run(former, brand.id);
    for (const d of brand.domains) {
      const key = domainKey(d);
      if (!key || this.takenElsewhere.host(key) || st.hostTaken?.get(key)) continue;
      st.domain?.run(key, brand.id);
      if (!opts.labels || registrableDomain(key) !== key) continue;
      const [label, suffix] = splitRegistrable(key);
      if (label && !isCountrySuffix(suffix) && !this.takenElsewhere.label(label))
        st.label?.run(label, brand.id);
    }
    for (const key of exactKeys(entry)) st.exact?.run(key, brand.id);
    const terms = termsOf(entry);
    const fields = [
      [FIELD.text, terms.text],
      [FIELD.compact, terms.compact],
      [FIELD.domains, terms.domains],
    ] as const;
    for (const [field, words] of fields)
      for (const w of words) st.term?.run(w, field, brand.id, entry.popularity);
    for (const w of new Set([...terms.text, ...terms.compact])) {
      if ([...w].length < TYPO_MIN) continue;
      // the word's own key is new exactly when the word is new to the vocabulary
      if (Number(st.typo?.run(w, w).changes) > 0) {
        st.vocab?.run(w);
        for (const key of deletionKeys(w)) if (key !== w) st.typo?.run(key, w);
      }
    }
  }

  /**
   * The labels of a whole catalog: a registrable label whose registrable domains all name one
   * brand, when that brand is international (a generic suffix, or national sites in two
   * countries); one country's site (otto.fi) speaks for that country alone.
   */
  finishBuild(meta: { version: string; builtAt: string }) {
    const labels = new Map<string, { id: number | null; countries: Set<string> | null }>();
    const rows = this.db.prepare("SELECT host, id FROM domains").iterate() as Iterable<{
      host: string;
      id: number;
    }>;
    for (const { host, id } of rows) {
      if (registrableDomain(host) !== host) continue;
      const [label, suffix] = splitRegistrable(host);
      if (!label) continue;
      const known = labels.get(label) ?? { id, countries: new Set<string>() };
      const country = countryOf(suffix);
      if (known.id !== id) known.id = null;
      else if (country === null) known.countries = null;
      else known.countries?.add(country);
      labels.set(label, known);
    }
    for (const [label, { id, countries }] of labels)
      if (id !== null && (countries === null || countries.size > 1)) this.st.label?.run(label, id);
    const count = (where: string) =>
      Number(
        (this.db.prepare(`SELECT count(*) AS n FROM brands ${where}`).get() as { n: number }).n,
      );
    const put = this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    put.run("version", meta.version);
    put.run("builtAt", meta.builtAt);
    put.run("brands", String(count("")));
    put.run("artwork", String(count("WHERE artwork = 1")));
  }

  /** Remove a brand and every row that finds it (overlay). */
  remove(id: number) {
    for (const table of ["brands", "variants", "slugs", "domains", "labels", "exact", "terms"])
      this.db.prepare(`DELETE FROM ${table} WHERE id = ?`).run(id);
  }
}

/**
 * Write a whole catalog into a new database file: a temp file beside `file`, renamed over it
 * once complete, so a reader never opens a half-written catalog. Brands come in id order (the
 * first claim of a domain or slug is the lowest id's). Returns the number of brands.
 */
export async function writeCatalogFile(
  file: string,
  meta: { version: string; builtAt: string },
  brands: Iterable<Brand> | AsyncIterable<Brand>,
  open: (file: string) => DatabaseSync,
): Promise<number> {
  return writeInto(file, meta, open, async (writer) => {
    let n = 0;
    for await (const b of brands) {
      writer.put(b);
      // a running service writing its catalog (MongoDB's version) answers requests meanwhile:
      // the event loop gets a turn every few brands (about 1 ms each)
      if (++n % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return n;
  });
}

/** writeCatalogFile for brands at hand (synchronous). */
export function writeCatalogFileSync(
  file: string,
  meta: { version: string; builtAt: string },
  brands: Iterable<Brand>,
  open: (file: string) => DatabaseSync,
): number {
  return writeInto(file, meta, open, (writer) => {
    let n = 0;
    for (const b of brands) {
      writer.put(b);
      n++;
    }
    return n;
  });
}

function writeInto<T extends number | Promise<number>>(
  file: string,
  meta: { version: string; builtAt: string },
  open: (file: string) => DatabaseSync,
  fill: (writer: CatalogWriter) => T,
): T {
  const tmp = `${file}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  const db = open(tmp);
  const fail = (err: unknown): never => {
    try {
      db.close();
    } catch {}
    rmSync(tmp, { force: true });
    throw err;
  };
  const finish = (n: number) => {
    try {
      writer.finishBuild(meta);
      db.exec("COMMIT");
      db.exec("PRAGMA optimize");
      db.close();
      renameSync(tmp, file);
      return n;
    } catch (err) {
      return fail(err);
    }
  };
  let writer: CatalogWriter;
  try {
    db.exec(
      "PRAGMA page_size = 8192; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144",
    );
    createSchema(db);
    writer = new CatalogWriter(db);
    db.exec("BEGIN");
    const n = fill(writer);
    return (n instanceof Promise ? n.then(finish, fail) : finish(n)) as T;
  } catch (err) {
    return fail(err);
  }
}
