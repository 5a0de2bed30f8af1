import type { Database } from "../../store/embedded/db";
import type { StringIds } from "./period";

/** Most strings a connection keeps in memory (then it starts over). */
const CACHE = 200_000;

/**
 * The embedded store's strings (accounts, keys, routes, slugs, variants, misses, ...) as integer
 * ids (`usage_strings`), cached on each connection. A writer's new ids are remembered per
 * transaction (`begin`), and forgotten when it rolls back.
 */
export class StringTable implements StringIds {
  private byStr = new Map<string, number>();
  private byId = new Map<number, string>();
  /** strings given new ids in the transaction under way (null: none under way) */
  private added: string[] | null = null;

  constructor(private db: Database) {}

  /** The id of a string, made (INSERT) when new: only inside a write transaction. */
  id(s: string): number {
    const known = this.byStr.get(s);
    if (known !== undefined) return known;
    const row = this.db.get<{ id: number }>("SELECT id FROM usage_strings WHERE s = ?", s);
    let id = row?.id;
    if (id === undefined) {
      id = Number(this.db.run("INSERT INTO usage_strings (s) VALUES (?)", s).lastInsertRowid);
      this.added?.push(s);
    }
    this.remember(id, s);
    return id;
  }

  /** The id of a string when it has one (a read), else undefined. */
  find(s: string): number | undefined {
    const known = this.byStr.get(s);
    if (known !== undefined) return known;
    const id = this.db.get<{ id: number }>("SELECT id FROM usage_strings WHERE s = ?", s)?.id;
    if (id !== undefined) this.remember(id, s);
    return id;
  }

  str(id: number): string {
    const known = this.byId.get(id);
    if (known !== undefined) return known;
    const s = this.db.get<{ s: string }>("SELECT s FROM usage_strings WHERE id = ?", id)?.s;
    if (s === undefined) throw new RangeError(`usage string ${id} missing`);
    this.remember(id, s);
    return s;
  }

  /** Look up the ids not cached yet in one query (before decoding rows that refer to them). */
  resolve(ids: Iterable<number>): void {
    const missing: number[] = [];
    for (const id of ids) if (!this.byId.has(id)) missing.push(id);
    if (missing.length === 0) return;
    if (this.byId.size + missing.length > CACHE) this.clear();
    for (let i = 0; i < missing.length; i += 5000) {
      const rows = this.db.all<{ id: number; s: string }>(
        "SELECT id, s FROM usage_strings WHERE id IN (SELECT value FROM json_each(?))",
        JSON.stringify(missing.slice(i, i + 5000)),
      );
      for (const r of rows) this.remember(r.id, r.s);
    }
  }

  private remember(id: number, s: string) {
    if (this.byId.size >= CACHE && this.added === null) this.clear();
    this.byStr.set(s, id);
    this.byId.set(id, s);
  }

  private clear() {
    this.byStr.clear();
    this.byId.clear();
  }

  /** A write transaction starts: remember the ids it makes. */
  begin(): void {
    this.added = [];
  }

  /** It committed. */
  commit(): void {
    this.added = null;
  }

  /** It rolled back: the ids it made do not exist. */
  rollback(): void {
    for (const s of this.added ?? []) {
      const id = this.byStr.get(s);
      this.byStr.delete(s);
      if (id !== undefined) this.byId.delete(id);
    }
    this.added = null;
  }
}
