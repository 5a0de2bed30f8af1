/**
 * Admin CLI commands for the report queue (registered by src/admin/cli.ts):
 *
 *   reports list [--status open] [--limit 100]
 *   reports accept <id> [--pin] [--variant color]
 *   reports reject <id>
 *
 * They run on the configured store; a running service reads pins set here on its next poll.
 * `accept --pin` fetches the report's URL through discovery's guarded fetcher (DISCOVERY_PROXY,
 * DISCOVERY_ALLOW_PRIVATE as the service uses them).
 */
import { type Command, InvalidArgumentError } from "commander";
import { VARIANTS, type Variant } from "../catalog/built-catalog";
import { CliError, cliOperator, withStore } from "../cli";
import { loadConfig } from "../config";
import type { Store } from "../deps";
import { DomainError } from "../platform/domain-errors";
import type { CorrectionsService } from "./service";
import { REPORT_STATUSES, type Report, type ReportStatus } from "./store/port";

/** Tests point the CLI's fetcher at their fixtures here. */
export const reportHooks: { configure?: (c: CorrectionsService) => void } = {};

const oneOf =
  <T extends string>(values: readonly T[]) =>
  (value: string): T => {
    if (!(values as readonly string[]).includes(value))
      throw new InvalidArgumentError(`must be one of ${values.join(", ")}.`);
    return value as T;
  };

/** The reports as a table: one line each, newest first. */
export function reportTable(reports: Report[]): string {
  const rows = [
    ["id", "status", "votes", "brand", "kind", "created", "urls"],
    ...reports.map((r) => [
      r.id,
      r.status,
      String(r.votes),
      r.slug ?? r.domain ?? "-",
      r.kind,
      r.createdAt.slice(0, 16).replace("T", " "),
      r.urls.join(" ") || "-",
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0))) ?? [];
  return rows
    .map((row) =>
      row
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** The corrections service over an open store, with the catalog loaded (accept, reject). */
async function openCorrections(store: Store): Promise<CorrectionsService> {
  // loaded here only: svgo, sharp and the catalog are not needed by the other commands
  const [{ CatalogService }, { BrandResolver }, { GuardedFetcher }, discovery, svc] =
    await Promise.all([
      import("../catalog/service"),
      import("../catalog/brand/service"),
      import("../catalog/discovery/fetcher"),
      import("../catalog/discovery/setup"),
      import("./service"),
    ]);
  const config = loadConfig(process.env);
  const catalog = new CatalogService(store.catalog);
  await catalog.load();
  const corrections = new svc.CorrectionsService({
    store: store.corrections,
    catalog,
    brands: new BrandResolver(catalog),
    fetcher: new GuardedFetcher({
      userAgent: discovery.discoveryUserAgent(config.PUBLIC_URL),
      proxy: config.DISCOVERY_PROXY ?? null,
      allowLoopback: config.DISCOVERY_ALLOW_PRIVATE,
    }),
  });
  await corrections.refreshPins();
  reportHooks.configure?.(corrections);
  return corrections;
}

/** A refusal of the service (unknown report, decided already, artwork refused) as a CliError. */
async function asCli<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof DomainError) throw new CliError(err.message);
    throw err;
  }
}

export function registerReportCommands(root: Command) {
  const reports = root.command("reports").description("Users' reports of wrong or missing logos");
  reports
    .command("list")
    .description("Reports, newest first, as a table")
    .option("--status <status>", REPORT_STATUSES.join(", "), oneOf(REPORT_STATUSES), "open")
    .option("--limit <n>", "rows", (v) => Number.parseInt(v, 10), 100)
    .action((o: { status: ReportStatus; limit: number }) =>
      withStore(async (store) =>
        console.log(reportTable(await store.corrections.reports(o.status, o.limit))),
      ),
    );
  reports
    .command("accept")
    .description("Accept a report; --pin fetches its url and pins it as the brand's artwork")
    .argument("<id>")
    .option("--pin", "pin the report's (first) url as the brand's artwork")
    .option("--url <url>", "with --pin: which of the report's urls")
    .option(
      "--variant <variant>",
      `the variant to pin (${VARIANTS.join(", ")})`,
      oneOf(VARIANTS),
      "color",
    )
    .action((id: string, o: { pin?: boolean; variant: Variant; url?: string }) =>
      withStore(async (store) => {
        const c = await openCorrections(store);
        const r = await asCli(() => c.accept(id, cliOperator(), o));
        console.log(reportTable([r.report]));
        if (r.pin)
          console.log(
            `pinned ${r.pin.field} of ${r.pin.slug} (sha256 ${(r.pin.value as { sha256: string }).sha256})`,
          );
      }),
    );
  reports
    .command("reject")
    .description("Reject a report")
    .argument("<id>")
    .action((id: string) =>
      withStore(async (store) => {
        const c = await openCorrections(store);
        console.log(reportTable([await asCli(() => c.reject(id, cliOperator()))]));
      }),
    );
}
