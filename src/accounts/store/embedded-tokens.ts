import type { Database } from "../../store/embedded/db";
import type { TokenRecord, TokenStore } from "./port";

interface TokenRow {
  hash: string;
  kind: TokenRecord["kind"];
  account_id: string;
  family: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
}

/**
 * Embedded token store: one row per token in `auth_tokens` (only hashes and account ids, no
 * personal data). A use is one conditional UPDATE, so of concurrent uses (in this or another
 * process) exactly one wins. Expired tokens are deleted at open.
 */
export class EmbeddedTokenStore implements TokenStore {
  constructor(
    private db: Database,
    now: () => number = Date.now,
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS auth_tokens (
        hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        account_id TEXT NOT NULL,
        family TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER,
        revoked_at INTEGER
      );
      CREATE INDEX IF NOT EXISTS auth_tokens_by_account ON auth_tokens (account_id);
      CREATE INDEX IF NOT EXISTS auth_tokens_by_family ON auth_tokens (family);
      CREATE INDEX IF NOT EXISTS auth_tokens_by_expiry ON auth_tokens (expires_at);
    `);
    const t = now();
    // checked first: a database that is read-only or locked at open still serves reads
    if (db.get("SELECT 1 FROM auth_tokens WHERE expires_at <= ? LIMIT 1", t))
      db.write("DELETE FROM auth_tokens WHERE expires_at <= ?", t);
  }

  async put(record: TokenRecord) {
    this.putSync(record, "REPLACE");
  }

  /** `IGNORE` keeps a stored token with the same hash as it is (an idempotent import) */
  putSync(r: TokenRecord, onConflict: "REPLACE" | "IGNORE") {
    this.db.write(
      `INSERT OR ${onConflict} INTO auth_tokens
         (hash, kind, account_id, family, created_at, expires_at, used_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      r.hash,
      r.kind,
      r.accountId,
      r.family,
      r.createdAt,
      r.expiresAt,
      r.usedAt,
      r.revokedAt,
    );
  }

  async get(hash: string): Promise<TokenRecord | null> {
    const r = this.db.get<TokenRow>("SELECT * FROM auth_tokens WHERE hash = ?", hash);
    if (!r) return null;
    return {
      hash: r.hash,
      kind: r.kind,
      accountId: r.account_id,
      family: r.family,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      usedAt: r.used_at,
      revokedAt: r.revoked_at,
    };
  }

  async use(hash: string, at: number) {
    const { changes } = this.db.write(
      "UPDATE auth_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL AND revoked_at IS NULL",
      at,
      hash,
    );
    return changes === 1;
  }

  async revokeFamily(family: string, at: number) {
    this.db.write(
      "UPDATE auth_tokens SET revoked_at = ? WHERE family = ? AND revoked_at IS NULL",
      at,
      family,
    );
  }

  async removeAccount(accountId: string) {
    this.db.write("DELETE FROM auth_tokens WHERE account_id = ?", accountId);
  }
}
