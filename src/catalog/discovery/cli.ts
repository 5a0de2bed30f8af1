/**
 * Admin CLI commands for web logo discovery (registered by src/admin/cli.ts, sharing src/cli.ts):
 *
 *   discover <domain...> | --file domains.txt | --directory [--force]
 *   discover --report <domain...>
 *   discoveries list [--status found]
 *   discoveries rediscover <domain>
 *   discoveries takedown <domain>
 *
 * They run on the configured store (same env vars as the service): records land where a
 * running service reads them (it polls for new records), so a bulk run needs no restart.
 * Runs are resumable: a domain found, or tried today, is answered from the store unless
 * --force is given.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { CliError, cliOperator, withStore } from "../../cli";
import { loadConfig } from "../../config";
import type { Store } from "../../deps";
import type { Brand } from "../built-catalog";
import { CatalogService, hasArtwork } from "../service";
import type { TrailEntry } from "./artwork-choice";
import type { DiscoveryService } from "./service";
import type { DiscoveryRecord } from "./store/port";

/** Tests point the CLI's discovery at their fixtures (DNS) here. */
export const discoveryHooks: { configure?: (d: DiscoveryService) => void } = {};

const SUMMARY_ROWS: [string, (r: DiscoveryRecord) => boolean][] = [
  ["found vector", (r) => r.status === "found" && r.assets.some((a) => a.kind === "svg")],
  ["found raster", (r) => r.status === "found" && !r.assets.some((a) => a.kind === "svg")],
  ["nothing", (r) => r.status === "nothing"],
  ["refused", (r) => r.status === "refused"],
  ["failed", (r) => r.status === "failed"],
  ["taken down", (r) => r.status === "taken_down"],
];

/** The summary table a bulk run ends with. */
export function summaryTable(records: DiscoveryRecord[]): string {
  const rows = SUMMARY_ROWS.map(([label, test]) => [label, records.filter(test).length] as const);
  const width = Math.max(...rows.map(([l]) => l.length), "total".length);
  const line = (l: string, n: number) => `${l.padEnd(width)}  ${String(n).padStart(6)}`;
  return [
    line("outcome", 0).replace(/\s+0$/, "  domains"),
    ...rows.map(([l, n]) => line(l, n)),
    line("total", records.length),
  ].join("\n");
}

/**
 * One domain's report: its outcome, then every logo candidate in the order tried with its
 * score and what became of it (chosen as which variant, or why it lost).
 */
export function reportTable(r: DiscoveryRecord, trail: TrailEntry[]): string {
  const head = `${r.domain}  ${r.status}${r.slug ? `  ${r.slug}` : ""}${r.reason ? `  (${r.reason})` : ""}`;
  if (!trail.length)
    return `${head}
  no candidates`;
  const rows = [
    ["origin", "score", "outcome", "url"],
    ...trail.map((e) => [e.origin, String(e.score), e.outcome, e.url]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => (row[i] as string).length)));
  const line = (row: string[]) =>
    `  ${row
      .slice(0, 3)
      .map((c, i) => c.padEnd(widths[i] as number))
      .join("  ")}  ${row[3]}`;
  return [head, ...rows.map(line)].join("\n");
}

function progress(done: number, total: number, found: number) {
  if (!process.stderr.isTTY) return;
  const width = 30;
  const filled = Math.round((done / Math.max(total, 1)) * width);
  process.stderr.write(
    `\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}  found ${found}`,
  );
  if (done === total) process.stderr.write("\n");
}

/** The catalog, enrichment and discovery services over an open store, for one command. */
async function openDiscovery(store: Store) {
  // loaded by the discovery commands only: it brings svgo, sharp and the HTML parser, which the
  // other admin commands do not need at start
  const { startEnrichment } = await import("./setup");
  const { DiscoveryService } = await import("./service");
  const records = await import("./records");
  const config = loadConfig(process.env);
  const catalog = new CatalogService(store.catalog);
  await catalog.load();
  const background = await startEnrichment(config, store, catalog);
  discoveryHooks.configure?.(background.discovery);
  return {
    records,
    domainOf: (b: Brand) => DiscoveryService.domainOf(b),
    catalog,
    discovery: background.discovery,
    close: background.close,
  };
}

function domainsFrom(o: { file?: string; directory?: boolean }, args: string[], d: Opened) {
  const domains = [...args];
  if (o.file) {
    let text: string;
    try {
      text = readFileSync(o.file, "utf8");
    } catch (err) {
      throw new CliError(`cannot read ${o.file}: ${(err as Error).message}`);
    }
    for (const line of text.split("\n")) {
      const d = line.replace(/#.*/, "").trim();
      if (d) domains.push(d);
    }
  }
  if (o.directory)
    for (const b of d.catalog.each()) {
      const domain = !hasArtwork(b) && d.domainOf(b);
      if (domain) domains.push(domain);
    }
  return [...new Set(domains.map((d) => d.toLowerCase()))];
}

const OFF = "discovery is off (DISCOVERY=off makes no outbound request); run with DISCOVERY=on";
const printJson = (value: unknown) => console.log(JSON.stringify(value, null, 2));
type Opened = Awaited<ReturnType<typeof openDiscovery>>;

/** Runs `f` with the discovery services on the configured store; `fetches`: needs DISCOVERY=on. */
function withDiscovery(f: (d: Opened) => Promise<void>, fetches = false) {
  return withStore(async (store) => {
    if (fetches && !loadConfig(process.env).DISCOVERY) throw new CliError(OFF);
    const d = await openDiscovery(store);
    try {
      await f(d);
    } finally {
      await d.close();
    }
  });
}

/** Discovers every domain with a pool of DISCOVERY_WORKERS; the records in finishing order. */
async function discoverAll(d: Opened, domains: string[], force: boolean) {
  const records: DiscoveryRecord[] = [];
  let next = 0;
  const worker = async () => {
    while (next < domains.length) {
      const domain = domains[next++] as string;
      const r = await d.discovery.discover(domain, { force }).catch(
        (err): DiscoveryRecord => ({
          ...d.records.emptyRecord(domain, null),
          status: "failed",
          reason: (err as Error).message,
        }),
      );
      records.push(r);
      progress(records.length, domains.length, d.records.summarize(records).found ?? 0);
    }
  };
  const workers = loadConfig(process.env).DISCOVERY_WORKERS;
  await Promise.all(Array.from({ length: workers }, worker));
  return records;
}

export function registerDiscoveryCommands(root: Command) {
  root
    .command("discover")
    .description(
      "Read brands' websites for their logos now (needs DISCOVERY=on), with a summary table",
    )
    .argument("[domains...]", "registrable domains, e.g. example.com")
    .option("--file <path>", "also every domain in this file (one a line, # comments)")
    .option("--directory", "also every catalog brand without artwork")
    .option("--force", "fetch again domains found before or tried today")
    .option(
      "--report",
      "fetch each domain now (as --force) and print its candidates: found, chosen, why the others lost",
    )
    .action(
      (
        args: string[],
        o: { file?: string; directory?: boolean; force?: boolean; report?: boolean },
      ) =>
        withDiscovery(async (d) => {
          const domains = domainsFrom(o, args, d);
          if (!domains.length)
            throw new CliError("no domains: pass some, or --file, or --directory");
          if (o.report) {
            for (const domain of domains) {
              const trail: TrailEntry[] = [];
              const r = await d.discovery.discover(domain, { force: true, trail }).catch(
                (err): DiscoveryRecord => ({
                  ...d.records.emptyRecord(domain, null),
                  status: "failed",
                  reason: (err as Error).message,
                }),
              );
              console.log(`${reportTable(r, trail)}\n`);
            }
            return;
          }
          const records = await discoverAll(d, domains, o.force ?? false);
          for (const r of records)
            console.error(`${r.domain}\t${r.status}\t${r.slug ?? ""}\t${r.reason ?? ""}`);
          console.log(summaryTable(records));
        }, true),
    );

  const group = root.command("discoveries").description("Discovered brands");
  group
    .command("list")
    .description("Discovery records with provenance, newest first (JSON)")
    .option("--status <status>", "found, nothing, refused, failed or taken_down")
    .action((o: { status?: DiscoveryRecord["status"] }) =>
      withDiscovery(async (d) =>
        printJson((await d.discovery.list(o.status)).map(d.records.discoveryView)),
      ),
    );
  group
    .command("rediscover")
    .description("Read one domain's website again now (needs DISCOVERY=on)")
    .argument("<domain>")
    .action((domain: string) =>
      withDiscovery(
        async (d) =>
          printJson(d.records.discoveryView(await d.discovery.discover(domain, { force: true }))),
        true,
      ),
    );
  group
    .command("takedown")
    .description("Remove a domain's discovered artwork for good (rediscovery never brings it back)")
    .argument("<domain>")
    .action((domain: string) =>
      withDiscovery(async (d) =>
        printJson(d.records.discoveryView(await d.discovery.takedown(domain, cliOperator()))),
      ),
    );
}
