import { existsSync } from "node:fs";
import { join } from "node:path";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { MAX_ORIGINS, ORIGIN_PATTERN, publishableView } from "../accounts/model";
import { accountNotFound } from "../accounts/service";
import { registerDiscoveryCommands } from "../catalog/discovery/cli";
import { CliError, cliConfig, withStore } from "../cli";
import { loadConfig } from "../config";
import { DomainError } from "../platform/domain-errors";
import type { BucketLimits, Tier } from "../quota/limits";
import { limitsProblem, MAX_DAILY_LIMIT, TIERS } from "../quota/limits";
import { registerReportCommands } from "../reports/cli";
import { Database, DB_FILE } from "../store/embedded/db";
import { missesReport, projectionsRebuild } from "../usage/admin-commands";
import { MISS_KINDS, type MissKind } from "../usage/analytics/misses";
import { countersRebuild } from "../usage/counters";
import { accountView, LIST_LIMIT } from "./views";

function tierArg(value: string): Tier {
  if (!(TIERS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`must be one of ${TIERS.join(", ")}.`);
  return value as Tier;
}

function capArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_DAILY_LIMIT)
    throw new InvalidArgumentError(`must be an integer from 1 to ${MAX_DAILY_LIMIT}.`);
  return n;
}

function limitsOf(value: string | undefined, tier: Tier): Partial<BucketLimits> | null {
  if (value === undefined) return null;
  let limits: unknown;
  try {
    limits = JSON.parse(value);
  } catch {
    throw new CliError(`--limits must be a JSON object such as '{"svg":100000}'`);
  }
  const problem = limitsProblem(tier, limits);
  if (problem) throw new CliError(`--${problem}`);
  return limits as Partial<BucketLimits>;
}

function missKindArg(value: string): MissKind {
  if (!(MISS_KINDS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`must be one of ${MISS_KINDS.join(", ")}.`);
  return value as MissKind;
}

function intArg(value: string): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError("must be a whole number from 1 to 999999.");
  return Number(value);
}

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

/**
 * The embedded database's integrity check. The database is opened on its own, without the
 * adapters (which would write their tables), so a damaged file is reported, not refused.
 */
function dbCheck() {
  const config = cliConfig();
  if (config.MONGODB_URL)
    throw new CliError("db check: only for the embedded store (MONGODB_URL is set)");
  const path = join(config.DATA_DIR, DB_FILE);
  if (!existsSync(path)) throw new CliError(`db check: no database at ${path}`);
  let problems: string[];
  try {
    const db = new Database(path);
    try {
      problems = db.integrityCheck();
    } finally {
      db.close();
    }
  } catch (err) {
    problems = [(err as Error).message];
  }
  if (problems.length === 1 && problems[0] === "ok") {
    console.log("ok");
    return;
  }
  for (const p of problems) console.log(p);
  throw new CliError(`db check: ${path} has problems (${problems.length} listed above)`);
}

/** accounts list | show | set-tier */
function accountCommands(root: Command) {
  const accounts = root.command("accounts").description("Accounts");
  accounts
    .command("list")
    .description(`List accounts, oldest first (at most ${LIST_LIMIT})`)
    .option("--email <email>", "only the account(s) with this e-mail (case-insensitive)")
    .action((o: { email?: string }) =>
      withStore(async (_s, svc) =>
        print((await svc.listAccounts({ email: o.email, limit: LIST_LIMIT })).map(accountView)),
      ),
    );
  accounts
    .command("show")
    .description("One account with its keys (id, prefix, dates; never a hash)")
    .argument("<accountId>")
    .action((id: string) =>
      withStore(async (_s, svc) => {
        const a = await svc.getAccountWithEmail(id);
        if (!a) throw accountNotFound(id);
        print(accountView(a));
      }),
    );
  accounts
    .command("set-tier")
    .description("Change an account's tier (and an enterprise account's custom limits)")
    .argument("<accountId>")
    .requiredOption("--tier <tier>", `one of ${TIERS.join(", ")}`, tierArg)
    .option("--limits <json>", `enterprise daily limits per bucket, e.g. '{"svg":100000}'`)
    .action((id: string, o: { tier: Tier; limits?: string }) =>
      withStore(async (_s, svc) => {
        const a = await svc.changeTier(id, o.tier, limitsOf(o.limits, o.tier));
        print({ accountId: a.id, tier: a.tier, limits: a.limits });
      }),
    );
}

/** keys create | list | revoke, publishable-keys create | revoke */
function keyCommands(root: Command) {
  const keys = root.command("keys").description("API keys");
  keys
    .command("create")
    .description("Create an account with one API key (the key is shown once)")
    .requiredOption("--tier <tier>", `one of ${TIERS.join(", ")}`, tierArg)
    .option("--email <email>", "the account's e-mail")
    .option("--limits <json>", `enterprise daily limits per bucket, e.g. '{"svg":100000}'`)
    .action((o: { tier: Tier; email?: string; limits?: string }) =>
      withStore(async (_s, svc) => {
        const limits = limitsOf(o.limits, o.tier);
        print(await svc.createAccountWithKey({ tier: o.tier, email: o.email ?? null, limits }));
        console.error("The API key is shown only once: store it now.");
      }),
    );
  keys
    .command("list")
    .description("An account's keys, revoked ones included (id, prefix, dates)")
    .argument("<accountId>")
    .action((id: string) =>
      withStore(async (_s, svc) => {
        const a = await svc.getAccount(id);
        if (!a) throw accountNotFound(id);
        print(accountView(a).keys);
      }),
    );
  keys
    .command("revoke")
    .description("Revoke one key (it stops working at once on this store)")
    .argument("<keyId>")
    .action((keyId: string) => withStore(async (_s, svc) => print(await svc.revokeKey(keyId))));

  const publishable = root
    .command("publishable-keys")
    .description("Publishable keys (pk_…) for /i/ image URLs");
  publishable
    .command("create")
    .description("A publishable key for an account; the key is printed once")
    .argument("<accountId>")
    .requiredOption(
      "--origin <pattern...>",
      "allowed host pattern(s): app.example.com, *.example.com, localhost:5173",
    )
    .option("--daily-cap <n>", "requests per UTC day through this key", capArg)
    .action((id: string, o: { origin: string[]; dailyCap?: number }) =>
      withStore(async (_s, svc) => {
        const bad = o.origin.find((p) => !new RegExp(ORIGIN_PATTERN).test(p));
        if (bad !== undefined || o.origin.length > MAX_ORIGINS)
          throw new CliError(
            bad === undefined
              ? `--origin: at most ${MAX_ORIGINS} patterns`
              : `--origin ${bad}: a lowercase host pattern such as app.example.com or *.example.com, optionally with :port`,
          );
        const k = await svc.createPublishableKey(id, o.origin, o.dailyCap ?? null);
        print({ ...publishableView(k), publishableKey: k.publishableKey });
        console.error("The publishable key is shown only once: store it now.");
      }),
    );
  publishable
    .command("revoke")
    .description("Revoke one publishable key")
    .argument("<keyId>")
    .action((keyId: string) =>
      withStore(async (_s, svc) =>
        print(publishableView(await svc.revokePublishableKey(null, keyId))),
      ),
    );
}

/** projections rebuild, misses, counters rebuild: the usage log's commands */
function usageCommands(root: Command) {
  root
    .command("projections")
    .description("Usage projections")
    .command("rebuild")
    .description(
      "Recompute usage_daily and the analytics cells and misses from the usage event log",
    )
    .action(() =>
      withStore(async (store) =>
        console.log(await projectionsRebuild(store, (line) => console.error(line))),
      ),
    );
  root
    .command("misses")
    .description(
      "Domains, e-mail domains, slugs and searches that found nothing, all accounts, ranked",
    )
    .option("--since <period>", "7d, 24h or a YYYY-MM-DD day (at most 366 days back)", "7d")
    .option("--kind <kind>", `only one kind: ${MISS_KINDS.join(", ")}`, missKindArg)
    .option("--limit <n>", "rows to print", intArg, 50)
    .action((o: { since: string; kind?: MissKind; limit: number }) =>
      withStore(async (store) => {
        try {
          console.log(await missesReport(store, o));
        } catch (err) {
          if (err instanceof RangeError || err instanceof DomainError)
            throw new CliError(err.message);
          throw err;
        }
      }),
    );
  root
    .command("counters")
    .description("Quota counters")
    .command("rebuild")
    .description("Replay today's usage events into the shared counter store (Upstash)")
    .action(() =>
      withStore(async (store) =>
        console.log(await countersRebuild(store, loadConfig(process.env))),
      ),
    );
}

function program(): Command {
  const root = new Command("admin")
    .description("Operator commands on the store the service is configured for (same env vars).")
    .usage("<command> [options]  (npm run admin -- <command> ...)")
    .showSuggestionAfterError()
    .exitOverride();
  accountCommands(root);
  keyCommands(root);
  usageCommands(root);
  root
    .command("db")
    .description("The embedded store's SQLite database (DATA_DIR/brand-api.sqlite)")
    .command("check")
    .description("PRAGMA integrity_check: prints ok, or the problems found (exit 1)")
    .action(() => dbCheck());
  registerDiscoveryCommands(root);
  registerReportCommands(root);
  return root;
}

/** Runs one CLI invocation; resolves to the exit code. Errors are one line on stderr. */
export async function runAdmin(argv: string[]): Promise<number> {
  const root = program();
  // every subcommand reports parse errors through exitOverride too
  for (const c of root.commands) {
    c.exitOverride();
    for (const sub of c.commands) sub.exitOverride();
  }
  try {
    if (argv.length === 0) {
      root.outputHelp();
      return 2;
    }
    await root.parseAsync(argv, { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError)
      // help and version are "errors" with exit code 0; commander already printed the message
      return err.exitCode;
    // expected refusals (unknown ids, bad config, no counter store) and unexpected failures
    // (a store that does not answer) alike: the message's first line, never a stack trace
    const message = err instanceof Error ? err.message : String(err);
    console.error(`error: ${message.split("\n")[0]}`);
    return 1;
  }
}
