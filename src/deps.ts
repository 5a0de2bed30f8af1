import type { Principal } from "./accounts/model";
import { AccountService } from "./accounts/service";
import { CatalogService } from "./catalog/service";
import type { Config } from "./config";
import { type QuotaGate, unlimitedGate } from "./quota/port";
import { openStore, type Store } from "./store";
import { noopRecorder, type UsageRecorder } from "./usage/port";

/** Everything the HTTP layer needs, wired to adapters. Tests build their own. */
export interface Deps {
  config: Config;
  store: Store;
  catalog: CatalogService;
  accounts: AccountService;
  quota: QuotaGate;
  usage: UsageRecorder;
  verifyBearer?: (token: string) => Promise<Principal | null>;
  /** release resources (flush buffers, close connections) */
  close(): Promise<void>;
}

export async function buildDeps(config: Config, store?: Store): Promise<Deps> {
  const s = store ?? (await openStore(config));
  const catalog = new CatalogService(s.catalog);
  await catalog.load();
  const accounts = new AccountService(s.accounts, config.KEY_CACHE_TTL_MS);
  const quota: QuotaGate = unlimitedGate;
  const usage: UsageRecorder = noopRecorder;
  return {
    config,
    store: s,
    catalog,
    accounts,
    quota,
    usage,
    async close() {
      catalog.stop();
      await usage.close();
      await s.close();
    },
  };
}
