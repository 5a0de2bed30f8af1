#!/usr/bin/env bun
/**
 * Operator CLI. Works on the store the service is configured for (same env vars).
 *   npm run admin -- keys create --tier pro [--email ops@example.com]
 *   npm run admin -- accounts set-tier <accountId> --tier enterprise [--limits '{"svg":100000}']
 *   npm run admin -- projections rebuild     (usage_daily from the usage event log)
 *   npm run admin -- counters rebuild        (today's quota counters from the usage event log)
 */
import { parseArgs } from "node:util";
import { AccountService } from "../src/accounts/service";
import { ConfigError, loadConfig } from "../src/config";
import { type BucketLimits, limitsProblem, TIERS, type Tier } from "../src/quota/limits";
import { openStore, type Store } from "../src/store";
import { usageCommands } from "../src/usage/admin-commands";

type Command = (args: string[], store: Store) => Promise<void>;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

function tierOf(value: string | undefined): Tier {
  if (!value || !(TIERS as readonly string[]).includes(value))
    fail(`--tier must be one of ${TIERS.join(", ")}`);
  return value as Tier;
}

function limitsOf(value: string | undefined, tier: Tier) {
  if (!value) return null;
  let limits: unknown;
  try {
    limits = JSON.parse(value);
  } catch {
    fail("--limits must be a JSON object such as '{\"svg\":100000}'");
  }
  const problem = limitsProblem(tier, limits);
  if (problem) fail(`--${problem}`);
  return limits as Partial<BucketLimits>;
}

const commands: Record<string, Command> = {
  ...usageCommands,
  "keys create": async (args, store) => {
    const { values } = parseArgs({
      args,
      options: { tier: { type: "string" }, email: { type: "string" }, limits: { type: "string" } },
    });
    const tier = tierOf(values.tier);
    const issued = await new AccountService(store.accounts).createAccountWithKey({
      tier,
      email: values.email ?? null,
      limits: limitsOf(values.limits, tier),
    });
    console.log(JSON.stringify(issued, null, 2));
    console.error("The API key is shown only once: store it now.");
  },
  "accounts set-tier": async (args, store) => {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { tier: { type: "string" }, limits: { type: "string" } },
    });
    const id = positionals[0] ?? fail("usage: accounts set-tier <accountId> --tier <tier>");
    const tier = tierOf(values.tier);
    const account = await new AccountService(store.accounts).changeTier(
      id,
      tier,
      limitsOf(values.limits, tier),
    );
    console.log(
      JSON.stringify({ accountId: account.id, tier: account.tier, limits: account.limits }),
    );
  },
};

async function main(argv: string[]) {
  const name = argv.slice(0, 2).join(" ");
  const command = commands[name];
  if (!command)
    fail(`usage: npm run admin -- <command>\ncommands:\n  ${Object.keys(commands).join("\n  ")}`);
  let store: Store;
  try {
    store = await openStore(loadConfig(process.env));
  } catch (err) {
    if (err instanceof ConfigError) fail(`Configuration error: ${err.message}`);
    throw err;
  }
  try {
    await command(argv.slice(2), store);
  } finally {
    await store.close();
  }
}

await main(process.argv.slice(2));
