import { hostname, userInfo } from "node:os";
import { AccountService } from "./accounts/service";
import { ConfigError, loadConfig } from "./config";
import { openStore, type Store } from "./deps";

/**
 * What every operator CLI command shares (`npm run admin`: admin/cli.ts composes the commands,
 * catalog/discovery/cli.ts registers its own).
 */

/** A refusal the operator can act on: printed as one line, exit code 1, no stack trace. */
export class CliError extends Error {}

/** The configuration from the environment; a bad one is a CliError. */
export function cliConfig() {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`Configuration error: ${err.message}`);
    throw err;
  }
}

/**
 * The identity an operator's CLI changes are recorded under (pins, report decisions,
 * takedowns, audit events): `cli:<user>@<host>`, the account that ran it on that machine.
 */
export function cliOperator(): string {
  let user = process.env.USER;
  try {
    user ??= userInfo().username;
  } catch {}
  return `cli:${user ?? "unknown"}@${hostname()}`;
}

/** Opens the configured store for one command and closes it afterwards. */
export async function withStore<T>(f: (store: Store, accounts: AccountService) => Promise<T>) {
  const store = await openStore(cliConfig());
  try {
    return await f(store, new AccountService(store.accounts));
  } finally {
    await store.close();
  }
}
