import { existsSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { JWT_SECRET_NAME } from "../../accounts/jwt";
import type { AccountEvent } from "../../accounts/model";
import type { EmbeddedAccountStore } from "../../accounts/store/embedded";
import type { EmbeddedTokenStore } from "../../accounts/store/embedded-tokens";
import type { DataKeyRecord, TokenRecord } from "../../accounts/store/port";
import type { EmbeddedBillingStore } from "../../billing/store/embedded";
import type { BillingLink } from "../../billing/store/port";
import type { EmbeddedDiscoveryStore } from "../../catalog/discovery/store/embedded";
import type { DiscoveryRecord } from "../../catalog/discovery/store/port";
import type { EmbeddedEnrichmentStore } from "../../catalog/enrichment/store/embedded";
import type { EnrichmentRecord } from "../../catalog/enrichment/store/port";
import { JsonlLog } from "../../platform/jsonl";
import { log } from "../../platform/log";
import type { EmbeddedVisitorStore } from "../../visitor-counter/store/embedded";
import type { Database } from "./db";

/**
 * The files an earlier embedded store kept under DATA_DIR (everything but the usage events),
 * read into the SQLite database once, at open.
 */
export const LEGACY_FILES = [
  "accounts.jsonl",
  "account-keys",
  "secrets",
  "jwt-secret",
  "tokens.jsonl",
  "billing.jsonl",
  "enrichment.jsonl",
  "discoveries.jsonl",
  "visitor-counter.json",
] as const;

export interface LegacyStores {
  accounts: EmbeddedAccountStore;
  tokens: EmbeddedTokenStore;
  billing: EmbeddedBillingStore;
  enrichment: EmbeddedEnrichmentStore;
  discoveries: EmbeddedDiscoveryStore;
  visitors: EmbeddedVisitorStore;
}

type TokenOp =
  | { op: "put"; record: TokenRecord }
  | { op: "use"; hash: string; at: number }
  | { op: "revokeFamily"; family: string; at: number }
  | { op: "removeAccount"; accountId: string };

type BillingRecord =
  | ({ type: "link" } & BillingLink)
  | { type: "event"; id: string }
  | { type: "event.released"; id: string }
  | { type: "subscription"; id: string; created: number };

/** The lines of a JSONL file; a torn or unreadable line is skipped with a warning. */
function lines<T>(path: string): T[] {
  const file = new JsonlLog<T>(path);
  try {
    return file.readAll();
  } finally {
    file.close();
  }
}

/** The live tokens after replaying the token operations, as the JSONL store did. */
function replayTokens(ops: TokenOp[], now: number): TokenRecord[] {
  const tokens = new Map<string, TokenRecord>();
  for (const op of ops) {
    if (op.op === "put") tokens.set(op.record.hash, { ...op.record });
    else if (op.op === "use") {
      const r = tokens.get(op.hash);
      if (r && r.usedAt === null) r.usedAt = op.at;
    } else if (op.op === "revokeFamily") {
      for (const r of tokens.values())
        if (r.family === op.family && r.revokedAt === null) r.revokedAt = op.at;
    } else for (const [hash, r] of tokens) if (r.accountId === op.accountId) tokens.delete(hash);
  }
  return [...tokens.values()].filter((r) => r.expiresAt > now);
}

function replayBilling(records: BillingRecord[]) {
  const links = new Map<string, BillingLink>();
  const events = new Set<string>();
  const subscriptions = new Map<string, number>();
  for (const r of records) {
    if (r.type === "link") {
      const { type, ...link } = r;
      // re-inserted: the link saved last is the newest row (byCustomer)
      links.delete(link.accountId);
      links.set(link.accountId, link);
    } else if (r.type === "event") events.add(r.id);
    else if (r.type === "event.released") events.delete(r.id);
    else subscriptions.set(r.id, r.created);
  }
  return { links: [...links.values()], events: [...events], subscriptions };
}

/** The latest discovery per domain, a taken-down one never replaced (as the JSONL store kept them). */
function latestDiscoveries(records: DiscoveryRecord[]): DiscoveryRecord[] {
  const byDomain = new Map<string, DiscoveryRecord>();
  for (const r of records)
    if (byDomain.get(r.domain)?.status !== "taken_down") byDomain.set(r.domain, r);
  return [...byDomain.values()];
}

/**
 * Import the files of an earlier embedded store under `dataDir`, if there are any: all of them in
 * one transaction, each row inserted only where none is stored (a re-run after a crash between
 * the commit and the renames changes nothing), then each file or folder renamed with an
 * `.imported` suffix (kept, not deleted). Returns what was read, per kind.
 */
export function importLegacyFiles(
  db: Database,
  dataDir: string,
  stores: LegacyStores,
  now = Date.now(),
): Record<string, number> | null {
  const found = LEGACY_FILES.filter((f) => existsSync(join(dataDir, f)));
  if (found.length === 0) return null;
  const path = (f: (typeof LEGACY_FILES)[number]) => join(dataDir, f);
  const has = (f: (typeof LEGACY_FILES)[number]) => found.includes(f);
  const counts: Record<string, number> = {};
  db.tx(() => {
    if (has("accounts.jsonl")) {
      const events = lines<AccountEvent>(path("accounts.jsonl"));
      stores.accounts.appendSync(events);
      counts.accountEvents = events.length;
    }
    if (has("account-keys")) {
      counts.dataKeys = 0;
      for (const name of readdirSync(path("account-keys")).filter((n) => n.endsWith(".json"))) {
        let record: DataKeyRecord;
        try {
          record = JSON.parse(readFileSync(join(path("account-keys"), name), "utf8"));
        } catch {
          log("warn", "skipping unreadable account data key file", { file: name });
          continue;
        }
        stores.accounts.putDataKeySync(record);
        counts.dataKeys++;
      }
    }
    const secrets: [string, string][] = has("secrets")
      ? readdirSync(path("secrets"))
          .filter((n) => !n.endsWith(".tmp"))
          .map((n) => [n, join(path("secrets"), n)])
      : [];
    // the JWT signing secret generated when no JWT_SECRET is set (accounts/jwt.ts)
    if (has("jwt-secret")) secrets.push([JWT_SECRET_NAME, path("jwt-secret")]);
    for (const [name, file] of secrets) {
      const value = readFileSync(file, "utf8").trim();
      if (value) stores.accounts.serverSecretSync(name, value);
    }
    if (secrets.length) counts.secrets = secrets.length;
    if (has("tokens.jsonl")) {
      const live = replayTokens(lines<TokenOp>(path("tokens.jsonl")), now);
      for (const r of live) stores.tokens.putSync(r, "IGNORE");
      counts.tokens = live.length;
    }
    if (has("billing.jsonl")) {
      const b = replayBilling(lines<BillingRecord>(path("billing.jsonl")));
      stores.billing.importSync(b.links, b.events, b.subscriptions);
      counts.billingLinks = b.links.length;
    }
    if (has("enrichment.jsonl")) {
      const latest = new Map<number, EnrichmentRecord>();
      for (const r of lines<EnrichmentRecord>(path("enrichment.jsonl"))) latest.set(r.brandId, r);
      for (const r of latest.values()) stores.enrichment.saveSync(r, true);
      counts.enrichment = latest.size;
    }
    if (has("discoveries.jsonl")) {
      const latest = latestDiscoveries(lines<DiscoveryRecord>(path("discoveries.jsonl")));
      for (const r of latest) stores.discoveries.saveSync(r, true);
      counts.discoveries = latest.length;
    }
    if (has("visitor-counter.json")) {
      const v = JSON.parse(readFileSync(path("visitor-counter.json"), "utf8")) as {
        total?: number;
        secret?: string;
      };
      stores.visitors.importSync(v.total ?? 0, v.secret ?? "");
      counts.visitors = v.total ?? 0;
    }
  }, true);
  log("info", "imported the files of the earlier embedded store into the database", {
    file: db.path,
    ...counts,
  });
  for (const f of found) {
    try {
      renameSync(path(f), `${path(f)}.imported`);
    } catch (err) {
      // another process starting on the same DATA_DIR renamed it first
      if ((err as NodeJS.ErrnoException).code !== "ENOENT")
        log("warn", "could not rename an imported file; it will be imported again (no change)", {
          file: f,
          reason: (err as Error).message,
        });
    }
  }
  return counts;
}
