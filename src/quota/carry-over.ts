import type { AccountService } from "../accounts/service";
import type { QuotaService } from "./service";

/**
 * Make every key regeneration carry the day's usage over to the new key, whichever route
 * regenerates (operator or self-service): wraps `accounts.regenerateKey` once, at wiring time.
 */
export function carryUsageOnRegenerate(accounts: AccountService, quota: () => QuotaService): void {
  const regenerate = accounts.regenerateKey.bind(accounts);
  accounts.regenerateKey = async (accountId: string) => {
    const issued = await regenerate(accountId);
    await quota().carryOver(issued.previous, issued.keyId);
    return issued;
  };
}
