import { join } from "node:path";
import type { TokenRecord, TokenStore } from "../../accounts/port";
import { JsonlLog } from "./jsonl";
import { writePrivateFile } from "./secret-file";

/** a token log longer than this, and 4x its live tokens, is rewritten at start */
export const COMPACT_MIN_LINES = 1000;

type TokenOp =
  | { op: "put"; record: TokenRecord }
  | { op: "use"; hash: string; at: number }
  | { op: "revokeFamily"; family: string; at: number }
  | { op: "removeAccount"; accountId: string };

/**
 * Embedded token store: token operations appended to DATA_DIR/tokens.jsonl (only hashes and
 * account ids, no personal data) and replayed into memory at start; expired tokens are dropped
 * on replay, and a log mostly made of dead entries is rewritten with the live tokens only.
 */
export class EmbeddedTokenStore implements TokenStore {
  private log: JsonlLog<TokenOp>;
  private tokens = new Map<string, TokenRecord>();

  constructor(
    dataDir: string,
    private now: () => number = Date.now,
  ) {
    const path = join(dataDir, "tokens.jsonl");
    this.log = new JsonlLog(path);
    const ops = this.log.readAll();
    for (const op of ops) this.apply(op);
    const t = this.now();
    for (const [hash, r] of this.tokens) if (r.expiresAt <= t) this.tokens.delete(hash);
    if (ops.length > COMPACT_MIN_LINES && ops.length > 4 * this.tokens.size) {
      this.log.close();
      const live = [...this.tokens.values()].map((record) => ({ op: "put", record }));
      writePrivateFile(path, live.map((op) => `${JSON.stringify(op)}\n`).join(""));
      this.log = new JsonlLog(path);
    }
  }

  async put(record: TokenRecord) {
    this.write({ op: "put", record });
  }

  async get(hash: string) {
    const r = this.tokens.get(hash);
    return r ? { ...r } : null;
  }

  async use(hash: string, at: number) {
    const r = this.tokens.get(hash);
    if (!r || r.usedAt !== null || r.revokedAt !== null) return false;
    this.write({ op: "use", hash, at });
    return true;
  }

  async revokeFamily(family: string, at: number) {
    this.write({ op: "revokeFamily", family, at });
  }

  async removeAccount(accountId: string) {
    this.write({ op: "removeAccount", accountId });
  }

  close() {
    this.log.close();
  }

  private write(op: TokenOp) {
    this.log.append([op]);
    this.apply(op);
  }

  private apply(op: TokenOp) {
    if (op.op === "put") this.tokens.set(op.record.hash, { ...op.record });
    else if (op.op === "use") {
      const r = this.tokens.get(op.hash);
      if (r && r.usedAt === null) r.usedAt = op.at;
    } else if (op.op === "revokeFamily") {
      for (const r of this.tokens.values())
        if (r.family === op.family && r.revokedAt === null) r.revokedAt = op.at;
    } else
      for (const [hash, r] of this.tokens)
        if (r.accountId === op.accountId) this.tokens.delete(hash);
  }
}
